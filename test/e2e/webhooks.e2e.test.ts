import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import type { Rest } from "../support/herald-client.js";
import { restClient, startStack, type Stack } from "../support/stack.js";
import { waitUntil } from "../support/wait.js";

// Webhooks through the REST API against a real local receiver, with the webhooks role
// running as in production (`herald webhooks`), including a kill -9 of it.

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let stack: Stack;
let api: Rest;
let appId: string;
let server: http.Server;
let receiverUrl: string;
const received: Received[] = [];
/** The receiver's answer to every request while set. */
let answer = 200;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  stack = await startStack(inject("infra"), {
    envFor: {
      webhooks: {
        HERALD_WEBHOOK_RETRY_SCHEDULE_MS: "200,400,800,1600,3200,6400,6400",
        HERALD_WEBHOOK_TIMEOUT_MS: "1000",
      },
    },
  });
  api = restClient(stack.gatewayUrls[0]!, stack.apiKey);
  const app = await api("POST", "/v1/apps", { name: "Hooks", platform: "web", bundle_id: "com.example.hooks" });
  expect(app.status, app.text).toBe(201);
  appId = app.body.id;
}, 300_000);

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await stack?.stop();
});

const deliveredIds = () => new Set(received.map((r) => String(r.headers["webhook-id"])));

describe("webhooks over the REST API", () => {
  it("manages endpoints: create answers the secret once, client keys are refused", async () => {
    const created = await api("POST", `/v1/apps/${appId}/webhooks`, {
      url: "https://example.com/hook",
      events: ["campaign.completed", "device.invalidated"],
      description: "crm",
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const id = created.body.id;
    const got = await api("GET", `/v1/apps/${appId}/webhooks/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ url: "https://example.com/hook", enabled: true, disabled_reason: null });
    expect(got.text).not.toContain(created.body.secret);
    const list = await api("GET", `/v1/apps/${appId}/webhooks?per_page=10`);
    expect(list.body).toMatchObject({ page: 1, per_page: 10 });
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(id);
    const patched = await api("PATCH", `/v1/apps/${appId}/webhooks/${id}`, { enabled: false, events: ["user.erased"] });
    expect(patched.body).toMatchObject({ enabled: false, events: ["user.erased"] });

    const bad = await api("POST", `/v1/apps/${appId}/webhooks`, { url: "https://example.com", events: ["nope"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("ValidationError");
    const badUrl = await api("POST", `/v1/apps/${appId}/webhooks`, {
      url: "ftp://example.com",
      events: ["webhook.test"],
    });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.message).toMatch(/url/);

    const key = await api("POST", `/v1/apps/${appId}/api-keys`, { name: "site", kind: "client" });
    expect(key.status, key.text).toBe(201);
    const client = restClient(stack.gatewayUrls[0]!, key.body.secret);
    expect((await client("GET", `/v1/apps/${appId}/webhooks`)).status).toBe(403);
    expect(
      (await client("POST", `/v1/apps/${appId}/webhooks`, { url: receiverUrl, events: ["webhook.test"] })).status,
    ).toBe(403);

    expect((await api("DELETE", `/v1/apps/${appId}/webhooks/${id}`)).status).toBe(204);
    expect((await api("GET", `/v1/apps/${appId}/webhooks/${id}`)).status).toBe(404);
  });

  it("delivers signed test events, retries a 500 under the same id, rotates and replays", async () => {
    const created = await api("POST", `/v1/apps/${appId}/webhooks`, { url: receiverUrl, events: ["webhook.test"] });
    expect(created.status, created.text).toBe(201);
    const { id, secret } = created.body;
    answer = 500;
    received.length = 0;
    const test = await api("POST", `/v1/apps/${appId}/webhooks/${id}/test`);
    expect(test.status, test.text).toBe(202);
    const eventId = test.body.event_id;
    await waitUntil("two attempts", () => received.length >= 2, 15_000);
    answer = 200;
    await waitUntil(
      "delivered",
      async () => {
        const a = await api("GET", `/v1/apps/${appId}/webhooks/${id}/attempts`);
        return a.body.data[0]?.status === "delivered";
      },
      15_000,
    );
    expect(new Set(received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([eventId]));
    const payload = new Webhook(secret).verify(
      received.at(-1)!.body,
      received.at(-1)!.headers as Record<string, string>,
    );
    expect(payload).toMatchObject({ type: "webhook.test", data: { webhook_id: id } });
    const attempts = await api("GET", `/v1/apps/${appId}/webhooks/${id}/attempts`);
    expect(attempts.body.data[0]).toMatchObject({ event_id: eventId, event_type: "webhook.test", status: "delivered" });
    expect(attempts.body.data[0].attempts).toBeGreaterThanOrEqual(2);

    const rotated = await api("POST", `/v1/apps/${appId}/webhooks/${id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.previous_secret_expires_at).not.toBeNull();
    received.length = 0;
    const replay = await api("POST", `/v1/apps/${appId}/webhooks/${id}/events/${eventId}/replay`);
    expect(replay.status, replay.text).toBe(202);
    await waitUntil("replayed", () => received.length >= 1, 15_000);
    const r = received[0]!;
    expect(r.headers["webhook-id"]).toBe(eventId);
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    new Webhook(rotated.body.secret).verify(r.body, r.headers as Record<string, string>);
  });

  it("loses no accepted event to a kill -9 of the dispatcher", async () => {
    const created = await api("POST", `/v1/apps/${appId}/webhooks`, { url: receiverUrl, events: ["webhook.test"] });
    const { id } = created.body;
    answer = 503;
    received.length = 0;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const t = await api("POST", `/v1/apps/${appId}/webhooks/${id}/test`);
      expect(t.status, t.text).toBe(202);
      ids.push(t.body.event_id);
    }
    await stack.kill("webhooks");
    answer = 200;
    await stack.restart("webhooks");
    await waitUntil(
      "every accepted event delivered",
      async () => {
        const a = await api("GET", `/v1/apps/${appId}/webhooks/${id}/attempts?per_page=50`);
        return a.body.data.filter((d: { status: string }) => d.status === "delivered").length === 20;
      },
      60_000,
    );
    const got = deliveredIds();
    for (const e of ids) expect(got.has(e), e).toBe(true);
  });
});
