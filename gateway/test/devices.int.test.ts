import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { apnsToken, fcmToken, webSubscription } from "../../test/support/device-tokens.js";
import {
  createApp,
  expectDeleted,
  expectError,
  expectLogFreeOf,
  ISO_TIMESTAMP as ISO,
  preflight,
  useGatewayStack,
} from "./harness.js";

// Devices, the headers every answer carries, and the operational routes, through the
// gateway's build() against the real credential and device-registry services.
const gw = useGatewayStack();
const secretsSeen: string[] = [];

describe("devices", () => {
  it("registers, upserts, lists, reads, updates, opts out and in, and deletes", async () => {
    const app = await createApp(gw, gw.key);
    const token = apnsToken();
    secretsSeen.push(token);
    const registration = {
      app_id: app.id,
      push_token: token,
      platform: "ios",
      external_id: "user-1",
      language: "de",
      timezone: "Europe/Berlin",
      app_version: "1.2.3",
      tags: ["beta"],
    };
    const reg = await gw.call("POST", "/v1/devices/register", gw.key, registration);
    expect(reg.status, reg.text).toBe(200);
    // Every field as given, and nothing else but the id, the state and the timestamps.
    expect(reg.body).toEqual({
      ...registration,
      id: expect.any(String),
      opted_in: true,
      invalid: false,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const id = reg.body.id as string;

    const again = await gw.call("POST", "/v1/devices/register", gw.key, {
      app_id: app.id,
      push_token: token,
      platform: "ios",
      language: "fr",
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, language: "fr", external_id: "user-1" });

    const bare = await gw.call("POST", "/v1/devices/register", gw.key, {
      app_id: app.id,
      push_token: fcmToken(),
      platform: "android",
    });
    expect(bare.status, bare.text).toBe(200);
    expect(bare.body).toMatchObject({ external_id: null, language: null, timezone: null, app_version: null, tags: [] });
    const sub = webSubscription();
    secretsSeen.push(sub.json);
    expect(
      (await gw.call("POST", "/v1/devices/register", gw.key, { app_id: app.id, push_token: sub.json, platform: "web" }))
        .status,
    ).toBe(200);

    const page = await gw.call("GET", `/v1/devices?app_id=${app.id}&page=1&per_page=2`, gw.key);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ page: 1, per_page: 2, total: 3 });
    expect(page.body.data).toHaveLength(2);
    expect((await gw.call("GET", `/v1/devices?app_id=${app.id}&page=2&per_page=2`, gw.key)).body.data).toHaveLength(1);
    expect((await gw.call("GET", `/v1/devices?app_id=${app.id}`, gw.key)).body.per_page).toBe(50);

    expect((await gw.call("GET", `/v1/devices/${id}`, gw.key)).body).toMatchObject({ id, language: "fr" });

    const upd = await gw.call("PUT", `/v1/devices/${id}`, gw.key, {
      external_id: "user-2",
      language: "es",
      tags: ["vip"],
    });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body).toMatchObject({
      id,
      external_id: "user-2",
      language: "es",
      timezone: "Europe/Berlin",
      tags: ["vip"],
    });
    const cleared = await gw.call("PUT", `/v1/devices/${id}`, gw.key, { external_id: null, app_version: "" });
    expect(cleared.body).toMatchObject({ external_id: null, app_version: null, language: "es" });

    // Opt-out and opt-in need no body; an empty one, {} or none at all are all fine.
    const out = await gw.call("POST", `/v1/devices/${id}/opt-out`, gw.key);
    expect(out.status, out.text).toBe(200);
    expect(out.body.opted_in).toBe(false);
    expect((await gw.call("GET", `/v1/devices/${id}`, gw.key)).body.opted_in).toBe(false);
    const withEmpty = await gw.call("POST", `/v1/devices/${id}/opt-in`, gw.key, "", {
      "content-type": "application/json",
    });
    expect(withEmpty.status, withEmpty.text).toBe(200);
    expect(withEmpty.body.opted_in).toBe(true);
    expect((await gw.call("POST", `/v1/devices/${id}/opt-out`, gw.key, {})).body.opted_in).toBe(false);
    expect((await gw.call("POST", `/v1/devices/${id}/opt-in`, gw.key)).body.opted_in).toBe(true);

    await expectDeleted(gw, gw.key, `/v1/devices/${id}`);
  });

  it("answers 400 for bad registrations, 404 for unknown apps and devices", async () => {
    const app = await createApp(gw, gw.key);
    const bad = [
      { app_id: app.id, push_token: "abc", platform: "ios" },
      { app_id: app.id, push_token: apnsToken(), platform: "windows" },
      { app_id: app.id, push_token: apnsToken(), platform: "ios", language: "xx" },
      { app_id: app.id, push_token: apnsToken(), platform: "ios", tags: "vip" },
      { app_id: app.id, push_token: apnsToken(), platform: "ios", tags: ["x".repeat(65)] },
      { app_id: "not-a-uuid", push_token: apnsToken(), platform: "ios" },
      { app_id: app.id, push_token: 12345, platform: "ios" },
      { push_token: apnsToken(), platform: "ios" },
    ];
    for (const body of bad)
      expectError(await gw.call("POST", "/v1/devices/register", gw.key, body), 400, "ValidationError");
    expectError(
      await gw.call("POST", "/v1/devices/register", gw.key, {
        app_id: randomUUID(),
        push_token: apnsToken(),
        platform: "ios",
      }),
      404,
      "NotFound",
    );
    expectError(await gw.call("GET", "/v1/devices", gw.key), 400, "ValidationError");
    expectError(await gw.call("GET", "/v1/devices?app_id=nope", gw.key), 400, "ValidationError");
    expectError(await gw.call("GET", `/v1/devices?app_id=${app.id}&per_page=500`, gw.key), 400, "ValidationError");
    for (const [method, path] of [
      ["GET", ""],
      ["PUT", ""],
      ["DELETE", ""],
      ["POST", "/opt-out"],
      ["POST", "/opt-in"],
    ] as const) {
      expectError(
        await gw.call(
          method,
          `/v1/devices/${randomUUID()}${path}`,
          gw.key,
          method === "PUT" ? { language: "en" } : undefined,
        ),
        404,
        "NotFound",
      );
      expectError(
        await gw.call(
          method,
          `/v1/devices/not-a-uuid${path}`,
          gw.key,
          method === "PUT" ? { language: "en" } : undefined,
        ),
        404,
        "NotFound",
      );
    }
    const dev = await gw.call("POST", "/v1/devices/register", gw.key, {
      app_id: app.id,
      push_token: apnsToken(),
      platform: "ios",
    });
    expectError(
      await gw.call("PUT", `/v1/devices/${dev.body.id}`, gw.key, { opted_in: false }),
      400,
      "ValidationError",
    );
    expectError(
      await gw.call("PUT", `/v1/devices/${dev.body.id}`, gw.key, { timezone: "Mars/Olympus" }),
      400,
      "ValidationError",
    );
  });
});

describe("rate-limit headers and request ids", () => {
  it("are on success and on client errors alike", async () => {
    const app = await createApp(gw, gw.key);
    const responses = [
      await gw.call("GET", "/v1/apps", gw.key),
      await gw.call("GET", "/v1/apps?per_page=0", gw.key),
      await gw.call("GET", `/v1/apps/${randomUUID()}`, gw.key),
      await gw.call("POST", "/v1/apps", gw.key, "{oops"),
      await gw.call("POST", "/v1/apps", gw.key, { name: "dup", platform: "ios", bundle_id: app.bundle_id }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 404, 400, 409]);
    let previous = Infinity;
    for (const res of responses) {
      expect(res.headers["x-ratelimit-limit"]).toBe("1000");
      const remaining = Number(res.headers["x-ratelimit-remaining"]);
      expect(remaining).toBeLessThan(previous);
      previous = remaining;
      expect(Number(res.headers["x-ratelimit-reset"])).toBeGreaterThan(Date.now() / 1000);
      expect(Number(res.headers["x-ratelimit-reset"])).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    }
  });

  it("echoes a sane X-Request-Id and replaces a bad one", async () => {
    const mine = await gw.call("GET", "/healthz", undefined, undefined, { "x-request-id": "req-123.abc" });
    expect(mine.headers["x-request-id"]).toBe("req-123.abc");
    const bad = await gw.call("GET", "/healthz", undefined, undefined, { "x-request-id": "bad id\twith spaces" });
    expect(bad.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("operations", () => {
  it("serves /healthz, /readyz and /metrics without authentication", async () => {
    expect(await gw.call("GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(await gw.call("GET", "/readyz")).toMatchObject({
      status: 200,
      body: { status: "ok", checks: { redis: true, credential: true, device_registry: true, campaign: true } },
    });
    const metrics = await gw.call("GET", "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.headers["content-type"]).toMatch(/^text\/plain/);
    expect(metrics.text).toContain('herald_gateway_requests_total{route="/v1/apps",method="GET",status="200"');
    expect(metrics.text).toContain("herald_gateway_request_duration_seconds_bucket");
    expect(metrics.text).toContain("herald_gateway_auth_failures_total");
  });

  it("answers CORS preflights without authentication", async () => {
    const res = await preflight(gw, "/v1/apps", "authorization,content-type");
    expect(res.statusCode).toBe(204);
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    expect(String(res.headers["access-control-allow-headers"])).toMatch(/Authorization/);
    const actual = await gw.call("GET", "/v1/apps", gw.key, undefined, { origin: "https://admin.example.com" });
    expect(String(actual.headers["access-control-expose-headers"])).toContain("X-RateLimit-Remaining");
  });
});

describe("secrets", () => {
  it("never reach the gateway's log", () => {
    expectLogFreeOf(gw, [gw.key, ...secretsSeen]);
  });
});
