import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { OutcomeKind } from "@herald/proto/delivery";
import { createLogger } from "@herald/runtime";
import { Redis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { apnsToken, fcmToken, webSubscription } from "../../test/support/device-tokens.js";
import { waitUntil } from "../../test/support/wait.js";
import { build } from "../src/app.js";
import { type CampaignClient, connectBackends } from "../src/backends.js";
import { CSV_COLUMNS, spreadsheetSafe } from "../src/delivery-export.js";
import { suiteFixture } from "../../test/support/suite-fixture.js";
import { createApp, expectError, gatewayConfig, ISO_TIMESTAMP, useGatewayStack } from "./harness.js";
import { type ScriptedOutcome, senderDouble } from "./sender-double.js";

/**
 * Per-device receipts through the REST API, against the real campaign service and device
 * registry, with this test playing the senders (sender-double.ts): the paged list and its
 * filters, the CSV and NDJSON exports (several stream chunks, RFC 4180 quoting, the
 * spreadsheet-formula guard, a failure part-way), a device's receipts, and the erasure of
 * a user's devices and records.
 */

const PLATFORM_COUNTS = { ios: 1_000, android: 700, web: 400 } as const;
const DEVICES = PLATFORM_COUNTS.ios + PLATFORM_COUNTS.android + PLATFORM_COUNTS.web;
/** Provider text a spreadsheet must not run, and text that needs RFC 4180 quoting. */
const FAILED_REASON = 'INVALID_ARGUMENT: a,b"c\r\nd';
const THROTTLED_REASON = '=HYPERLINK("https://evil.example","x")';

const gw = useGatewayStack({ rateLimitPerMinute: 1_000_000 });
const sender = suiteFixture(
  () => senderDouble(gw.backends.natsNamespace),
  (s) => s.close(),
);
let key: string;
let appId: string;
/** The registry's view of every device of the app. */
const deviceById = new Map<string, { platform: string; external_id: string | null }>();
let campaignId: string;

/** The scripted outcome of a device, from its id: every kind, with reasons that need care. */
function outcomeOf(deviceId: string): ScriptedOutcome {
  switch (Number.parseInt(deviceId.slice(-1), 16) % 4) {
    case 0:
      return { kind: OutcomeKind.DELIVERED, reason: "", attempts: 1 };
    case 1:
      return { kind: OutcomeKind.FAILED, reason: FAILED_REASON, attempts: 3 };
    case 2:
      return { kind: OutcomeKind.BOUNCED, reason: "BadDeviceToken", attempts: 1 };
    default:
      return { kind: OutcomeKind.THROTTLED, reason: THROTTLED_REASON, attempts: 5 };
  }
}
const OUTCOME_NAME: Record<number, string> = {
  [OutcomeKind.DELIVERED]: "delivered",
  [OutcomeKind.FAILED]: "failed",
  [OutcomeKind.BOUNCED]: "bounced",
  [OutcomeKind.THROTTLED]: "throttled",
};

/** External ids of users, some of which a spreadsheet would read as formulas, some needing quotes. */
function externalIdFor(i: number): string | undefined {
  switch (i % 5) {
    case 0:
      return undefined;
    case 1:
      return `@SUM(1+${i})`;
    case 2:
      return `-${i}+1`;
    case 3:
      return `user,"${i}"`;
    default:
      return `user-${i}`;
  }
}

function tokenFor(platform: keyof typeof PLATFORM_COUNTS): string {
  if (platform === "ios") return apnsToken();
  if (platform === "android") return fcmToken();
  return webSubscription().json;
}

async function importDevices(lines: Record<string, unknown>[]): Promise<void> {
  const res = await gw.call(
    "POST",
    `/v1/devices/import?app_id=${appId}`,
    key,
    lines.map((l) => JSON.stringify(l)).join("\n"),
    { "content-type": "application/x-ndjson" },
  );
  expect(res.status, res.text).toBe(200);
  expect(res.body.created, res.text).toBe(lines.length);
}

async function send(body: Record<string, unknown>, path = "/v1/push/send"): Promise<string> {
  const res = await gw.call("POST", path, key, {
    app_id: appId,
    name: `receipts ${randomUUID().slice(0, 8)}`,
    contents: { en: { title: "Hi", body: "There" } },
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** Plays the senders until the campaign has completed. */
async function answerUntilCompleted(id: string): Promise<void> {
  await waitUntil(
    `campaign ${id} to complete`,
    async () => {
      await sender.answer(outcomeOf);
      return (await gw.call("GET", `/v1/campaigns/${id}`, key)).body.status === "completed";
    },
    60_000,
    200,
  );
}

/** Every page of a list route, 200 at a time. */
async function allPages(path: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let page = 1; ; page++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await gw.call("GET", `${path}${sep}page=${page}&per_page=200`, key);
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.data);
    if (out.length >= res.body.total) return out;
  }
}

/** RFC 4180: fields separated by commas, records by CRLF, quoted fields with doubled quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' && field === "") {
      // A quoted field: up to the quote that is not doubled.
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error("unterminated quoted field");
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
    } else if (c === ",") {
      row.push(field);
      field = "";
      i++;
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i += 2;
    } else {
      if (c === "\n" || c === "\r") throw new Error(`bare line break at ${i}`);
      field += c;
      i++;
    }
  }
  if (field !== "" || row.length > 0) throw new Error("the last record does not end with CRLF");
  return rows;
}

/** A list item as its CSV row: formula-guarded text, empty for null. */
const csvCells = (d: Record<string, unknown>): string[] =>
  CSV_COLUMNS.map((c) => {
    const v = d[c];
    if (v === null) return "";
    return c === "external_id" || c === "reason" ? spreadsheetSafe(String(v))! : String(v);
  });

beforeAll(async () => {
  key = gw.key;
  appId = (await createApp(gw, key)).id;
  let i = 0;
  const lines: Record<string, unknown>[] = [];
  for (const [platform, count] of Object.entries(PLATFORM_COUNTS) as [keyof typeof PLATFORM_COUNTS, number][]) {
    for (let n = 0; n < count; n++, i++) {
      const externalId = externalIdFor(i);
      lines.push({ push_token: tokenFor(platform), platform, ...(externalId ? { external_id: externalId } : {}) });
    }
  }
  await importDevices(lines);
  for (const d of await allPages(`/v1/devices?app_id=${appId}`)) {
    deviceById.set(d.id as string, { platform: d.platform as string, external_id: d.external_id as string | null });
  }
  expect(deviceById.size).toBe(DEVICES);
  campaignId = await send({});
  await answerUntilCompleted(campaignId);
}, 180_000);

describe("GET /v1/campaigns/{id}/deliveries", () => {
  it("lists every device's receipt with its external id, outcome, reason and attempts", async () => {
    const first = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries`, key);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ page: 1, per_page: 50, total: DEVICES });
    expect(first.body.data).toHaveLength(50);

    const all = await allPages(`/v1/campaigns/${campaignId}/deliveries`);
    expect(new Set(all.map((d) => d.device_id)).size).toBe(DEVICES);
    for (const d of all) {
      const device = deviceById.get(d.device_id as string)!;
      const scripted = outcomeOf(d.device_id as string);
      expect(d).toEqual({
        device_id: d.device_id,
        external_id: device.external_id,
        platform: device.platform,
        outcome: OUTCOME_NAME[scripted.kind],
        reason: scripted.reason === "" ? null : scripted.reason,
        attempts: scripted.attempts,
        at: expect.stringMatching(ISO_TIMESTAMP),
      });
    }
  });

  it("filters by outcome and platform, and counts what matches", async () => {
    const expected = (outcome: string, platform?: string) =>
      [...deviceById].filter(
        ([id, d]) =>
          OUTCOME_NAME[outcomeOf(id).kind] === outcome && (platform === undefined || d.platform === platform),
      ).length;
    for (const outcome of ["delivered", "failed", "bounced", "throttled"]) {
      const res = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries?outcome=${outcome}&per_page=200`, key);
      expect(res.status, res.text).toBe(200);
      expect(res.body.total, outcome).toBe(expected(outcome));
      expect(res.body.data.every((d: { outcome: string }) => d.outcome === outcome)).toBe(true);
    }
    const web = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries?platform=web`, key);
    expect(web.body.total).toBe(PLATFORM_COUNTS.web);
    const both = await allPages(`/v1/campaigns/${campaignId}/deliveries?platform=android&outcome=bounced`);
    expect(both).toHaveLength(expected("bounced", "android"));
    expect(both.every((d) => d.platform === "android" && d.outcome === "bounced")).toBe(true);
  });

  it("refuses paging and filters out of range with 400, and unknown campaigns with 404", async () => {
    for (const query of ["per_page=201", "per_page=0", "page=0", "outcome=sent", "platform=symbian"]) {
      expectError(await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries?${query}`, key), 400, "ValidationError");
    }
    expectError(await gw.call("GET", `/v1/campaigns/${randomUUID()}/deliveries`, key), 404, "NotFound");
    const past = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries?page=1000`, key);
    expect(past.status, past.text).toBe(200);
    expect(past.body).toMatchObject({ data: [], total: DEVICES });
  });
});

describe("GET /v1/campaigns/{id}/deliveries/export", () => {
  it("streams CSV with a header row, RFC 4180 quoting and formula-guarded text, in the list's order", async () => {
    const res = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries/export?format=csv`, key);
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    expect(res.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(res.headers["content-disposition"]).toBe(`attachment; filename="campaign-${campaignId}-deliveries.csv"`);
    expect(res.headers["cache-control"]).toBe("no-store");
    const rows = parseCsv(res.text);
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    const listed = await allPages(`/v1/campaigns/${campaignId}/deliveries`);
    expect(rows.slice(1)).toEqual(listed.map(csvCells));
    // What a spreadsheet would have run is text now; text with commas, quotes and line breaks is quoted.
    expect(res.text).toContain(`,"'=HYPERLINK(""https://evil.example"",""x"")",`);
    expect(res.text).toContain('"INVALID_ARGUMENT: a,b""c\r\nd"');
    expect(res.text).toContain(",'@SUM(1+1),");
    expect(res.text).toContain(",'-2+1,");
    expect(res.text).toContain(',"user,""3""",');
  });

  it("streams NDJSON: one receipt per line, the list's items, and honours the filters", async () => {
    const res = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries/export?format=ndjson`, key);
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-ndjson");
    expect(res.headers["content-disposition"]).toBe(`attachment; filename="campaign-${campaignId}-deliveries.ndjson"`);
    expect(res.text.endsWith("\n")).toBe(true);
    const lines = res.text
      .slice(0, -1)
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(await allPages(`/v1/campaigns/${campaignId}/deliveries`));

    const filtered = await gw.call(
      "GET",
      `/v1/campaigns/${campaignId}/deliveries/export?format=ndjson&outcome=failed&platform=ios`,
      key,
    );
    const failedIos = filtered.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(failedIos).toEqual(await allPages(`/v1/campaigns/${campaignId}/deliveries?outcome=failed&platform=ios`));
    expect(failedIos.length).toBeGreaterThan(0);

    const csv = await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries/export?outcome=delivered`, key);
    expect(csv.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(
      parseCsv(csv.text)
        .slice(1)
        .every((r) => r[3] === "delivered"),
    ).toBe(true);
  });

  it("answers an empty export of a campaign without receipts, and the usual errors before the first byte", async () => {
    const scheduled = await send({ scheduled_at: new Date(Date.now() + 86_400_000).toISOString() });
    const empty = await gw.call("GET", `/v1/campaigns/${scheduled}/deliveries/export`, key);
    expect(empty.status, empty.text).toBe(200);
    expect(empty.text).toBe(`${CSV_COLUMNS.join(",")}\r\n`);
    const none = await gw.call("GET", `/v1/campaigns/${scheduled}/deliveries/export?format=ndjson`, key);
    expect(none.text).toBe("");
    expectError(await gw.call("GET", `/v1/campaigns/${randomUUID()}/deliveries/export`, key), 404, "NotFound");
    expectError(
      await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries/export?format=xlsx`, key),
      400,
      "ValidationError",
    );
  });

  describe("when the campaign service fails", () => {
    /** After how many chunks the export stream fails. */
    let failAfter = 0;
    /** A second gateway on the same backends whose export stream fails after `failAfter` chunks, listening. */
    const broken = suiteFixture(
      async () => {
        const backends = connectBackends(gw.backends);
        const real = backends.clients.campaigns;
        const campaigns: CampaignClient = {
          ...real,
          exportDeliveries: async function* (req, opts) {
            let chunks = 0;
            for await (const chunk of real.exportDeliveries(req, opts)) {
              if (chunks++ === failAfter) throw new ConnectError("campaign service lost", Code.Unavailable);
              yield chunk;
            }
          },
        };
        const redis = new Redis(gw.backends.redisUrl);
        const app = await build({
          config: gatewayConfig({ rateLimitPerMinute: 1_000_000 }),
          ...backends.clients,
          campaigns,
          redis,
          log: createLogger("gateway", "silent"),
        });
        await app.listen({ host: "127.0.0.1", port: 0 });
        return { app, redis, backends };
      },
      async ({ app, redis, backends }) => {
        await app.close();
        redis.disconnect();
        backends.close();
      },
    );

    /** A GET over a real connection: the status, what arrived, and whether the body was complete. */
    const download = (path: string) =>
      new Promise<{ status: number; contentType: string; text: string; complete: boolean }>((resolve, reject) => {
        const { port } = broken.app.server.address() as AddressInfo;
        const req = httpRequest(
          { host: "127.0.0.1", port, path, headers: { authorization: `Bearer ${key}` } },
          (res) => {
            const parts: Buffer[] = [];
            const done = () =>
              resolve({
                status: res.statusCode ?? 0,
                contentType: String(res.headers["content-type"]),
                text: Buffer.concat(parts).toString("utf8"),
                complete: res.complete,
              });
            res.on("data", (b: Buffer) => parts.push(b));
            res.on("end", done);
            res.on("error", done);
            res.on("aborted", done);
          },
        );
        req.on("error", reject);
        req.end();
      });

    it("cuts the download off when it fails part-way: no complete file", async () => {
      failAfter = 1;
      const res = await download(`/v1/campaigns/${campaignId}/deliveries/export?format=csv`);
      expect(res.status).toBe(200);
      expect(res.complete).toBe(false);
      const received = res.text.split("\r\n");
      expect(received[0]).toBe(CSV_COLUMNS.join(","));
      // The first chunk arrived, not every receipt.
      expect(received.length).toBeGreaterThan(2);
      expect(received.length).toBeLessThan(DEVICES + 1);
    });

    it("answers a JSON error when it fails before the first byte", async () => {
      failAfter = 0;
      const res = await download(`/v1/campaigns/${campaignId}/deliveries/export?format=ndjson`);
      expect(res.status).toBe(503);
      expect(res.complete).toBe(true);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(JSON.parse(res.text)).toMatchObject({ error: "ServiceUnavailable" });
    });
  });
});

describe("GET /v1/devices/{id}/deliveries", () => {
  it("lists a device's receipts newest first, up to the limit", async () => {
    const deviceId = [...deviceById.keys()].find((id) => outcomeOf(id).kind === OutcomeKind.DELIVERED)!;
    const one = await gw.call("GET", `/v1/devices/${deviceId}/deliveries`, key);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({
      data: [
        {
          campaign_id: campaignId,
          platform: deviceById.get(deviceId)!.platform,
          outcome: "delivered",
          reason: null,
          attempts: 1,
          at: expect.stringMatching(ISO_TIMESTAMP),
        },
      ],
    });

    const second = await send({ device_ids: [deviceId] }, "/v1/push/send-to-devices");
    await answerUntilCompleted(second);
    const both = await gw.call("GET", `/v1/devices/${deviceId}/deliveries`, key);
    expect(both.body.data.map((d: { campaign_id: string }) => d.campaign_id)).toEqual([second, campaignId]);
    expect(Date.parse(both.body.data[0].at)).toBeGreaterThanOrEqual(Date.parse(both.body.data[1].at));
    const limited = await gw.call("GET", `/v1/devices/${deviceId}/deliveries?limit=1`, key);
    expect(limited.body.data.map((d: { campaign_id: string }) => d.campaign_id)).toEqual([second]);

    for (const limit of ["0", "201", "x"]) {
      expectError(
        await gw.call("GET", `/v1/devices/${deviceId}/deliveries?limit=${limit}`, key),
        400,
        "ValidationError",
      );
    }
    expectError(await gw.call("GET", `/v1/devices/${randomUUID()}/deliveries`, key), 404, "NotFound");
  });
});

describe("DELETE /v1/apps/{app_id}/users/{external_id}", () => {
  it("erases the user's receipts, engagement, in-app states and devices, and a repeat answers zeros", async () => {
    const externalId = `erase/me é ${randomUUID().slice(0, 8)}`;
    await importDevices(
      ["ios", "android", "web"].map((platform) => ({
        push_token: tokenFor(platform as keyof typeof PLATFORM_COUNTS),
        platform,
        external_id: externalId,
      })),
    );
    const listed = await gw.call(
      "GET",
      `/v1/devices?app_id=${appId}&external_id=${encodeURIComponent(externalId)}`,
      key,
    );
    const ids = (listed.body.data as { id: string }[]).map((d) => d.id);
    expect(ids).toHaveLength(3);
    const campaign = await send({ external_ids: [externalId] }, "/v1/push/send-to-users");
    await answerUntilCompleted(campaign);
    const report = await gw.call("POST", `/v1/devices/${ids[0]}/notification-events`, key, {
      campaign_id: campaign,
      type: "clicked",
    });
    expect(report.status, report.text).toBe(204);
    const message = await gw.call("POST", `/v1/apps/${appId}/in-app-messages`, key, {
      name: "welcome",
      contents: { en: { title: "Hi", body: "Welcome" } },
      audience: { kind: "all" },
    });
    expect(message.status, message.text).toBe(201);
    const impression = await gw.call("POST", `/v1/devices/${ids[1]}/in-app-messages/${message.body.id}/events`, key, {
      type: "impression",
    });
    expect(impression.status, impression.text).toBe(204);
    const targeted = await gw.call("POST", `/v1/apps/${appId}/in-app-messages`, key, {
      name: "for them",
      contents: { en: { title: "Hi", body: "Just you" } },
      audience: { kind: "external_ids", external_ids: [externalId, "someone-else"] },
    });
    expect(targeted.status, targeted.text).toBe(201);
    const campaignPath = `/v1/campaigns/${campaign}`;
    expect((await gw.call("GET", campaignPath, key)).body.target).toEqual({ type: "users", external_ids_count: 1 });
    const statsBefore = (await gw.call("GET", `/v1/campaigns/${campaign}/stats`, key)).body;
    const othersBefore = (await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries`, key)).body.total;

    const path = `/v1/apps/${appId}/users/${encodeURIComponent(externalId)}`;
    const erased = await gw.call("DELETE", path, key);
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toMatchObject({
      external_id: externalId,
      devices: 3,
      receipts: 3,
      in_app_states: 1,
      audiences: 2,
    });
    expect(erased.body.engagements).toBeGreaterThanOrEqual(1);
    // The campaign's target and the message's audience no longer name the user.
    const scrubbed = await gw.call("GET", campaignPath, key);
    expect(scrubbed.status, scrubbed.text).toBe(200);
    expect(scrubbed.body.target).toEqual({ type: "users", external_ids_count: 0 });
    const message2 = await gw.call("GET", `/v1/apps/${appId}/in-app-messages/${targeted.body.id}`, key);
    expect(message2.status, message2.text).toBe(200);
    expect(message2.body.audience).toEqual({ kind: "external_ids", external_ids: ["someone-else"] });

    const after = await gw.call(
      "GET",
      `/v1/devices?app_id=${appId}&external_id=${encodeURIComponent(externalId)}`,
      key,
    );
    expect(after.body.total).toBe(0);
    for (const id of ids) expectError(await gw.call("GET", `/v1/devices/${id}`, key), 404, "NotFound");
    const receipts = await gw.call("GET", `/v1/campaigns/${campaign}/deliveries`, key);
    expect(receipts.body).toMatchObject({ data: [], total: 0 });
    // Counters are totals without device ids; other users' receipts stay.
    expect((await gw.call("GET", `/v1/campaigns/${campaign}/stats`, key)).body).toEqual(statsBefore);
    expect((await gw.call("GET", `/v1/campaigns/${campaignId}/deliveries`, key)).body.total).toBe(othersBefore);

    const again = await gw.call("DELETE", path, key);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({
      external_id: externalId,
      devices: 0,
      receipts: 0,
      engagements: 0,
      in_app_states: 0,
      audiences: 0,
    });
  });

  it("removes an external id no device has from the audiences naming it, and answers 0 on repeat", async () => {
    const externalId = `deviceless-${randomUUID().slice(0, 8)}`;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const campaign = await send(
      { external_ids: [externalId, "u-kept"], scheduled_at: later },
      "/v1/push/send-to-users",
    );
    const message = await gw.call("POST", `/v1/apps/${appId}/in-app-messages`, key, {
      name: "deviceless",
      contents: { en: { title: "Hi", body: "Only you" } },
      audience: { kind: "external_ids", external_ids: [externalId] },
    });
    expect(message.status, message.text).toBe(201);
    const path = `/v1/apps/${appId}/users/${externalId}`;
    const res = await gw.call("DELETE", path, key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      external_id: externalId,
      devices: 0,
      receipts: 0,
      engagements: 0,
      in_app_states: 0,
      audiences: 2,
    });
    expect((await gw.call("GET", `/v1/campaigns/${campaign}`, key)).body).toMatchObject({
      status: "scheduled",
      target: { type: "users", external_ids_count: 1 },
    });
    // Left with no user, the message reaches nobody.
    const after = await gw.call("GET", `/v1/apps/${appId}/in-app-messages/${message.body.id}`, key);
    expect(after.status, after.text).toBe(200);
    expect(after.body.audience).toEqual({ kind: "external_ids", external_ids: [] });
    expect((await gw.call("DELETE", path, key)).body).toMatchObject({ audiences: 0 });
    const cancelled = await gw.call("POST", `/v1/campaigns/${campaign}/cancel`, key);
    expect(cancelled.status, cancelled.text).toBe(200);
  });

  it("answers zeros for an external id no device has, and 404 for ids that cannot be one", async () => {
    const res = await gw.call("DELETE", `/v1/apps/${appId}/users/nobody-${randomUUID()}`, key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ devices: 0, receipts: 0, engagements: 0, in_app_states: 0, audiences: 0 });
    expectError(await gw.call("DELETE", `/v1/apps/${appId}/users/${"x".repeat(256)}`, key), 404, "NotFound");
    expectError(await gw.call("DELETE", `/v1/apps/${randomUUID()}/users/someone`, key), 404, "NotFound");
  });
});
