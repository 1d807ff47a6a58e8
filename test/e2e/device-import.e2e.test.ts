import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appWithBulkKey, type Rest } from "../support/herald-client.js";
import { restClient, startStack, type Stack } from "../support/stack.js";

// POST /v1/devices/import: a 200,000-line NDJSON file streamed through the gateway, with
// bad lines among the good ones, then imported again.

const LINES = 200_000;
const BAD = new Map<number, string>([
  [10, "not json"],
  [50_000, '{"push_token":"abc","platform":"ios"}'],
  [120_000, '{"push_token":"00","platform":"blackberry"}'],
  [150_000, `{"push_token":"${"f".repeat(64)}","platform":"ios","app_id":"00000000-0000-4000-8000-000000000000"}`],
  [199_999, `{"push_token":"${"a".repeat(20_000)}","platform":"android"}`],
]);

let stack: Stack;
let api: Rest;
let appId: string;
let key: string;

/** A deterministic APNs token per line, so a second import sends the very same file. */
const token = (i: number) => createHash("sha256").update(`device-${i}`).digest("hex");

/** The NDJSON file as a stream, produced as it is read (the test never holds it whole). */
function ndjson(opts: { language?: (i: number) => string } = {}): Readable {
  let i = 0;
  return new Readable({
    read() {
      const chunk: string[] = [];
      for (let n = 0; n < 2_000 && i < LINES; n++) {
        i++;
        const bad = BAD.get(i);
        chunk.push(
          bad ??
            JSON.stringify({
              push_token: token(i),
              platform: "ios",
              language: opts.language?.(i) ?? "en",
              external_id: `user-${i}`,
              tags: i % 2 ? ["odd"] : ["even"],
            }),
        );
      }
      this.push(chunk.length ? `${chunk.join("\n")}\n` : null);
    },
  });
}

async function importFile(body: Readable | string, contentType = "application/x-ndjson", as = key) {
  const res = await fetch(`${stack.gatewayUrls[0]}/v1/devices/import?app_id=${appId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${as}`, "content-type": contentType },
    body: typeof body === "string" ? body : (Readable.toWeb(body) as ReadableStream),
    duplex: "half",
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  stack = await startStack(inject("infra"), { env: { LOG_LEVEL: "info" } });
  ({ appId, key, api } = await appWithBulkKey(stack, {
    name: "Imported",
    platform: "ios",
    bundle_id: "com.example.imported",
  }));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe("POST /v1/devices/import", () => {
  const valid = LINES - BAD.size;

  it("imports a 200,000-line file as a stream, reporting each bad line with its number and reason", async () => {
    const t0 = Date.now();
    const res = await importFile(ndjson());
    const seconds = (Date.now() - t0) / 1000;
    console.log(
      `import of ${LINES.toLocaleString("en")} lines: ${seconds.toFixed(1)} s, ${Math.round(LINES / seconds)} lines/s`,
    );
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    expect(res.body).toMatchObject({ lines: LINES, created: valid, updated: 0, unchanged: 0, rejected: BAD.size });
    expect(res.body.rejections.map((r: { line: number }) => r.line)).toEqual([...BAD.keys()]);
    const reasons = Object.fromEntries(
      res.body.rejections.map((r: { line: number; reason: string }) => [r.line, r.reason]),
    );
    expect(reasons[10]).toBe("the line is not valid JSON");
    expect(reasons[50_000]).toMatch(/push_token/);
    expect(reasons[120_000]).toMatch(/platform/);
    expect(reasons[150_000]).toMatch(/app_id differs/);
    expect(reasons[199_999]).toMatch(/longer than/);
    const list = await api("GET", `/v1/devices?app_id=${appId}&per_page=1`);
    expect(list.body.total).toBe(valid);
  }, 300_000);

  it("changes nothing when the same file is imported again, and updates only what differs", async () => {
    const again = await importFile(ndjson());
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: valid, rejected: BAD.size });
    const changed = await importFile(ndjson({ language: (i) => (i % 1_000 === 0 ? "de" : "en") }));
    const differing = [...Array(LINES).keys()].map((k) => k + 1).filter((i) => i % 1_000 === 0 && !BAD.has(i)).length;
    expect(changed.body).toMatchObject({ created: 0, updated: differing, unchanged: valid - differing });
    const device = await api("GET", `/v1/devices?app_id=${appId}&per_page=1`);
    expect(device.body.total).toBe(valid);
  }, 300_000);

  it("answers 415 to a JSON body, 400 to a bad app id and 403 to another app's key", async () => {
    const json = await importFile('{"push_token":"x"}', "application/json");
    expect(json.status).toBe(415);
    expect(json.body.error).toBe("UnsupportedMediaType");
    const res = await fetch(`${stack.gatewayUrls[0]}/v1/devices/import?app_id=nope`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
      body: "",
    });
    expect(res.status).toBe(400);
    const boot = restClient(stack.gatewayUrls[0]!, stack.apiKey);
    const other = await boot("POST", "/v1/apps", { name: "Other", platform: "ios", bundle_id: "com.example.other" });
    const scoped = await boot("POST", `/v1/apps/${other.body.id}/api-keys`, { name: "other app", scope: "app" });
    expect(scoped.status, scoped.text).toBe(201);
    const otherKey = scoped.body.secret as string;
    const forbidden = await importFile(
      `{"push_token":"${token(1)}","platform":"ios"}\n`,
      "application/x-ndjson",
      otherKey,
    );
    expect(forbidden.status).toBe(403);
  });
});
