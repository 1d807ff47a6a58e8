import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { apnsToken } from "../../test/support/device-tokens.js";
import { noCounts } from "./campaign-stats.js";
import {
  appScopedKey,
  createApp,
  expectError,
  ISO_TIMESTAMP as ISO,
  preflight,
  type Reply,
  registerDevice,
  useGatewayStack,
  waitForCampaign as waitForCampaignWith,
} from "./harness.js";

// The send endpoints and campaigns, through the gateway's build() against the real
// credential, device-registry and campaign services. No sender runs: campaigns with an
// audience stay "sending"; those without one complete at fan-out.
const gw = useGatewayStack();

const content = { en: { title: "Sale", body: "50% off" }, de: { title: "Angebot" } };
const sendBody = (appId: string, extra: Record<string, unknown> = {}) => ({
  app_id: appId,
  name: "Spring sale",
  contents: content,
  ...extra,
});
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

const register = (appId: string, extra: Record<string, unknown> = {}) =>
  registerDevice(gw, gw.key, appId, { push_token: apnsToken(), platform: "ios", ...extra });
const push = (route: string, body: unknown, token = gw.key, headers: Record<string, string> = {}) =>
  gw.call("POST", `/v1/push/${route}`, token, body, headers);
const waitForCampaign = (id: string, done: (c: Reply["body"]) => boolean) => waitForCampaignWith(gw, gw.key, id, done);

describe("POST /v1/push/send", () => {
  it("creates a campaign and answers 201 with it", async () => {
    const app = await createApp(gw, gw.key);
    await register(app.id, { language: "de" });
    const res = await push("send", sendBody(app.id, { data: { action_url: "https://acme.example/sale" } }));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      app_id: app.id,
      name: "Spring sale",
      status: expect.stringMatching(/^(queued|sending|completed)$/),
      audience_size: expect.any(Number),
      sent_at: null,
      scheduled_at: null,
      completed_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      contents: { en: { title: "Sale", body: "50% off" }, de: { title: "Angebot", body: null } },
      data: { action_url: "https://acme.example/sale" },
      target: { type: "all" },
      ttl: 0,
      priority: "normal",
      collapse_id: null,
      image_url: null,
      failure_reason: null,
      stats: noCounts(res.body.id),
    });
    expect(res.headers["x-ratelimit-limit"]).toBe("1000");
    expect(res.headers["idempotent-replayed"]).toBeUndefined();

    // Fan-out hands the one device to the (absent) iOS sender; counters move with its outcomes.
    const sending = await waitForCampaign(res.body.id, (c) => c.status === "sending" && c.audience_size === 1);
    expect(sending).toMatchObject({ sent_at: expect.stringMatching(ISO), completed_at: null });
    const stats = await gw.call("GET", `/v1/campaigns/${res.body.id}/stats`, gw.key);
    expect(stats.status).toBe(200);
    expect(stats.body).toEqual(noCounts(res.body.id));
    expectError(await gw.call("POST", `/v1/campaigns/${res.body.id}/cancel`, gw.key), 409, "CampaignNotCancellable");
  });

  it("passes the delivery options through", async () => {
    const app = await createApp(gw, gw.key);
    const options = { ttl: 3600, priority: "high", collapse_id: "sale-1", image_url: "https://acme.example/a.png" };
    const res = await push("send", sendBody(app.id, options));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject(options);
  });

  it("schedules a send for later, and cancels it before delivery", async () => {
    const app = await createApp(gw, gw.key);
    const at = inAnHour();
    const res = await push("send", sendBody(app.id, { scheduled_at: at }));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: "scheduled", scheduled_at: at });

    const cancel = await gw.call("POST", `/v1/campaigns/${res.body.id}/cancel`, gw.key);
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body).toMatchObject({ id: res.body.id, status: "cancelled", sent_at: null });
    expect((await gw.call("GET", `/v1/campaigns/${res.body.id}`, gw.key)).body.status).toBe("cancelled");
    // Cancelling twice is as impossible as cancelling a delivered campaign.
    const again = await gw.call("POST", `/v1/campaigns/${res.body.id}/cancel`, gw.key, {});
    expectError(again, 409, "CampaignNotCancellable");
  });

  it("answers 409 CampaignNotCancellable once delivery has started", async () => {
    const app = await createApp(gw, gw.key);
    const res = await push("send", sendBody(app.id));
    expect(res.status, res.text).toBe(201);
    // Without devices, fan-out completes the campaign at once.
    await waitForCampaign(res.body.id, (c) => c.status === "completed");
    const cancel = await gw.call("POST", `/v1/campaigns/${res.body.id}/cancel`, gw.key);
    expect(cancel.status).toBe(409);
    expect(cancel.body).toEqual({ error: "CampaignNotCancellable", message: expect.stringMatching(/completed/) });
    expect(cancel.headers["content-type"]).toMatch(/^application\/json/);
  });

  it("answers 422 for content without an en entry and for a start time in the past", async () => {
    const app = await createApp(gw, gw.key);
    expectError(
      await push("send", {
        app_id: app.id,
        name: "x",
        contents: { de: { title: "Hallo" } },
      }),
      422,
      "UnprocessableEntity",
    );
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const res = await push("send", sendBody(app.id, { scheduled_at: past }));
    expectError(res, 422, "UnprocessableEntity");
    expect(res.body.message).toMatch(/past/);
    expect((await gw.call("GET", `/v1/campaigns?app_id=${app.id}`, gw.key)).body.total).toBe(0);
  });

  it("answers 400 for malformed bodies, with the field", async () => {
    const app = await createApp(gw, gw.key);
    const bad: [unknown, string][] = [
      [{ name: "x", contents: content }, "/app_id"],
      [{ app_id: app.id, contents: content }, "/name"],
      [{ app_id: app.id, name: "x" }, "/contents"],
      [sendBody(app.id, { contents: { EN: { title: "x" } } }), "/contents/EN"],
      [sendBody(app.id, { contents: { en: { title: "x".repeat(257) } } }), "/contents/en/title"],
      [sendBody(app.id, { data: { aps: { alert: "x" } } }), "/data/aps"],
      [sendBody(app.id, { ttl: 1.5 }), "/ttl"],
      [sendBody(app.id, { priority: "urgent" }), "/priority"],
      [sendBody(app.id, { image_url: "http://acme.example/a.png" }), "/image_url"],
      [sendBody(app.id, { scheduled_at: "tomorrow" }), "/scheduled_at"],
      [sendBody(app.id, { external_ids: ["u-1"] }), "/external_ids"],
    ];
    for (const [body, field] of bad) {
      const res = await push("send", body);
      expectError(res, 400, "ValidationError");
      expect(res.body.details?.[0]?.field, JSON.stringify(body).slice(0, 80)).toBe(field);
    }
    // The service's own shape checks are 400s as well: "xx" looks like a language but is none.
    expectError(
      await push("send", sendBody(app.id, { contents: { en: { title: "x" }, xx: { title: "y" } } })),
      400,
      "ValidationError",
    );
    expectError(await push("send", "{oops"), 400, "ValidationError");
    expectError(await push("send", sendBody(app.id), gw.key, { "idempotency-key": "" }), 400, "ValidationError");
  });

  it("answers 404 for an unknown app", async () => {
    expectError(await push("send", sendBody(randomUUID())), 404, "NotFound");
  });
});

describe("POST /v1/push/send-to-users and send-to-segment", () => {
  it("targets external ids, counting each once", async () => {
    const app = await createApp(gw, gw.key);
    await register(app.id, { external_id: "user-1" });
    const res = await push("send-to-users", sendBody(app.id, { external_ids: ["user-1", "user-2", "user-1"] }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.target).toEqual({ type: "users", external_ids_count: 2 });
    expectError(await push("send-to-users", sendBody(app.id)), 400, "ValidationError");
    const tooMany = Array.from({ length: 10_001 }, (_, i) => `u-${i}`);
    expectError(await push("send-to-users", sendBody(app.id, { external_ids: tooMany })), 400, "ValidationError");
  });

  it("answers 404 for an unknown segment", async () => {
    const app = await createApp(gw, gw.key);
    const res = await push("send-to-segment", sendBody(app.id, { segment_id: randomUUID() }));
    expectError(res, 404, "NotFound");
    expectError(await push("send-to-segment", sendBody(app.id, { segment_id: "vip" })), 400, "ValidationError");
  });
});

describe("Idempotency-Key", () => {
  it("replays the first campaign with 200 and Idempotent-Replayed", async () => {
    const app = await createApp(gw, gw.key);
    const headers = { "idempotency-key": `retry-${randomUUID()}` };
    const first = await push("send", sendBody(app.id, { scheduled_at: inAnHour() }), gw.key, headers);
    expect(first.status, first.text).toBe(201);
    const replay = await push("send", sendBody(app.id, { scheduled_at: inAnHour() }), gw.key, headers);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body).toMatchObject({ id: first.body.id, status: "scheduled" });

    // Another key, or another caller with the same key, sends anew.
    const other = await push("send", sendBody(app.id), gw.key, {
      "idempotency-key": `retry-${randomUUID()}`,
    });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
    const scoped = await appScopedKey(gw, gw.key, app.id);
    const byOtherCaller = await push("send", sendBody(app.id), scoped, headers);
    expect(byOtherCaller.status).toBe(201);
    expect(byOtherCaller.body.id).not.toBe(first.body.id);

    // The same key for a send to another app is a client bug, not a replay.
    const otherApp = await createApp(gw, gw.key);
    expectError(await push("send", sendBody(otherApp.id), gw.key, headers), 409, "Conflict");
  });
});

describe("campaigns", () => {
  it("lists newest first, 20 per page by default", async () => {
    const app = await createApp(gw, gw.key);
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) {
      const res = await push("send", sendBody(app.id, { name: `c${i}`, scheduled_at: inAnHour() }));
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
    const page1 = await gw.call("GET", `/v1/campaigns?app_id=${app.id}`, gw.key);
    expect(page1.status, page1.text).toBe(200);
    expect(page1.body).toMatchObject({ page: 1, per_page: 50, total: 21 });
    expect(page1.body.data).toHaveLength(21);
    expect(page1.body.data[0]).toMatchObject({ id: ids[20], name: "c20", status: "scheduled" });
    const page2 = await gw.call("GET", `/v1/campaigns?app_id=${app.id}&per_page=20&page=2`, gw.key);
    expect(page2.body.data.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect((await gw.call("GET", `/v1/campaigns?app_id=${app.id}&per_page=5&page=5`, gw.key)).body.data).toHaveLength(
      1,
    );
    expectError(await gw.call("GET", `/v1/campaigns?app_id=${app.id}&per_page=201`, gw.key), 400, "ValidationError");
    expectError(await gw.call("GET", "/v1/campaigns", gw.key), 400, "ValidationError");
  });

  it("answers 404 for unknown campaigns and ids that are not UUIDs", async () => {
    for (const path of ["", "/stats", "/cancel"]) {
      const method = path === "/cancel" ? "POST" : "GET";
      expectError(await gw.call(method, `/v1/campaigns/${randomUUID()}${path}`, gw.key), 404, "NotFound");
      expectError(await gw.call(method, `/v1/campaigns/not-a-uuid${path}`, gw.key), 404, "NotFound");
    }
  });

  it("keeps app-scoped keys to their own app's campaigns", async () => {
    const mine = await createApp(gw, gw.key);
    const other = await createApp(gw, gw.key);
    const scoped = await appScopedKey(gw, gw.key, mine.id);
    const theirs = await push("send", sendBody(other.id, { scheduled_at: inAnHour() }));
    expect(theirs.status).toBe(201);
    for (const [method, path] of [
      ["GET", ""],
      ["GET", "/stats"],
      ["POST", "/cancel"],
    ] as const) {
      expectError(await gw.call(method, `/v1/campaigns/${theirs.body.id}${path}`, scoped), 403, "Forbidden");
    }
    expect((await gw.call("GET", `/v1/campaigns/${theirs.body.id}`, gw.key)).body.status).toBe("scheduled");
    expectError(await push("send", sendBody(other.id), scoped), 403, "Forbidden");
    expectError(await gw.call("GET", `/v1/campaigns?app_id=${other.id}`, scoped), 403, "Forbidden");

    const own = await push("send", sendBody(mine.id, { scheduled_at: inAnHour() }), scoped);
    expect(own.status, own.text).toBe(201);
    // An app-scoped key's list defaults to its app.
    const list = await gw.call("GET", "/v1/campaigns", scoped);
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([own.body.id]);
    expect((await gw.call("POST", `/v1/campaigns/${own.body.id}/cancel`, scoped)).body.status).toBe("cancelled");
  });
});

describe("CORS", () => {
  it("lets browsers send Idempotency-Key and read Idempotent-Replayed", async () => {
    const res = await preflight(gw, "/v1/push/send", "authorization,idempotency-key");
    expect(res.statusCode).toBe(204);
    expect(String(res.headers["access-control-allow-headers"])).toContain("Idempotency-Key");
    const actual = await gw.call("GET", "/v1/apps", gw.key, undefined, { origin: "https://admin.example.com" });
    expect(String(actual.headers["access-control-expose-headers"])).toContain("Idempotent-Replayed");
  });
});

describe("the gateway's log", () => {
  it("shows no internal errors", () => {
    expect(gw.logs.text()).not.toContain("request failed");
  });
});
