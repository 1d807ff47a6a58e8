import { randomUUID } from "node:crypto";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../support/credential-fixtures.js";
import { apnsToken, fcmToken, webSubscription } from "../support/device-tokens.js";
import { findSecrets } from "../support/secret-scan.js";
import { restClient, startStack, type Stack } from "../support/stack.js";
import { waitUntil } from "../support/wait.js";

// The control plane through the REST API only, with every process running for real.
let stack: Stack;
let api: ReturnType<typeof restClient>;
let anon: ReturnType<typeof restClient>;
const secretsSeen: string[] = [];

const expectError = (res: { status: number; body: any }, status: number, name: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: name, message: expect.any(String) });
  expect(res.body.message.length).toBeGreaterThan(0);
};

async function createApp(bundle = `com.example.${randomUUID().slice(0, 8)}`) {
  const res = await api("POST", "/v1/apps", { name: "Example", platform: "ios", bundle_id: bundle });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; bundle_id: string };
}

beforeAll(async () => {
  stack = await startStack(inject("infra"), { env: { HERALD_AUTH_CACHE_MS: "300" } });
  api = restClient(stack.gatewayUrls[0]!, stack.apiKey);
  anon = restClient(stack.gatewayUrls[0]!);
  secretsSeen.push(stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

describe("health, metrics and documentation", () => {
  it("serves /healthz and /metrics without authentication", async () => {
    expect((await anon("GET", "/healthz")).status).toBe(200);
    const metrics = await anon("GET", "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("# TYPE");
  });

  it("serves an OpenAPI 3.1 document and offline docs", async () => {
    const doc = await anon("GET", "/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1\./);
    for (const p of [
      "/v1/apps",
      "/v1/apps/{app_id}",
      "/v1/apps/{app_id}/platform-config",
      "/v1/apps/{app_id}/api-keys",
      "/v1/devices/register",
      "/v1/devices",
      "/v1/devices/{id}",
      "/v1/devices/{id}/opt-out",
      "/v1/devices/{id}/opt-in",
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(p);
    }
    const docs = await fetch(`${stack.gatewayUrls[0]}/docs`, { redirect: "follow" });
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html.toLowerCase()).toContain("<html");
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs|fonts\.googleapis)/);
  });
});

describe("authentication", () => {
  it("answers 401 with the error body without or with a bad key", async () => {
    expectError(await anon("GET", "/v1/apps"), 401, "Unauthorized");
    expectError(
      await restClient(stack.gatewayUrls[0]!, `hk_live_${"x".repeat(40)}`)("GET", "/v1/apps"),
      401,
      "Unauthorized",
    );
    expectError(await restClient(stack.gatewayUrls[0]!, "not-a-key")("GET", "/v1/apps"), 401, "Unauthorized");
  });
});

describe("apps", () => {
  it("creates, reads, lists, updates and deletes an app", async () => {
    const app = await createApp();
    const got = await api("GET", `/v1/apps/${app.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: app.id, name: "Example", platform: "ios", bundle_id: app.bundle_id });
    expect(got.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const list = await api("GET", "/v1/apps?page=1&per_page=200");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 200, total: expect.any(Number) });
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(app.id);

    const upd = await api("PUT", `/v1/apps/${app.id}`, { name: "Renamed" });
    expect(upd.status).toBe(200);
    expect(upd.body.name).toBe("Renamed");

    const del = await api("DELETE", `/v1/apps/${app.id}`);
    expect(del.status).toBe(204);
    expectError(await api("GET", `/v1/apps/${app.id}`), 404, "NotFound");
  });

  it("refuses a duplicate bundle id with 409 and bad bodies with 400", async () => {
    const app = await createApp();
    expectError(
      await api("POST", "/v1/apps", { name: "Again", platform: "ios", bundle_id: app.bundle_id }),
      409,
      "Conflict",
    );
    expectError(
      await api("POST", "/v1/apps", { name: "X", platform: "symbian", bundle_id: "com.x" }),
      400,
      "ValidationError",
    );
    expectError(
      await api("POST", "/v1/apps", { name: 7, platform: "ios", bundle_id: "com.x" }),
      400,
      "ValidationError",
    );
    expectError(await api("POST", "/v1/apps", "{not json"), 400, "ValidationError");
    expectError(
      await api("POST", "/v1/apps", { name: "x".repeat(100_000), platform: "ios", bundle_id: "com.y" }),
      400,
      "ValidationError",
    );
    expectError(await api("GET", "/v1/apps?per_page=500"), 400, "ValidationError");
    expectError(await api("GET", "/v1/apps?page=0"), 400, "ValidationError");
  });

  it("answers 404 for unknown and malformed ids and unknown routes", async () => {
    expectError(await api("GET", `/v1/apps/${randomUUID()}`), 404, "NotFound");
    expectError(await api("GET", "/v1/apps/not-a-uuid"), 404, "NotFound");
    expectError(await api("GET", "/v1/nothing-here"), 404, "NotFound");
  });

  it("answers 413 for a body over the limit", async () => {
    // node:http, not fetch: the gateway answers as soon as it knows the body is too large
    // and closes the connection, and fetch drops an answer that arrives while it is
    // still uploading. The length is declared with the headers and the body held back, so
    // the answer cannot lose a race with an upload the gateway has already refused; the
    // body follows only if no answer came within a second (a gateway that counts bytes).
    const body = JSON.stringify({ name: "a", platform: "ios", bundle_id: "com.big", pad: "x".repeat(2 * 1024 * 1024) });
    const res = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = http.request(
        `${stack.gatewayUrls[0]}/v1/apps`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${stack.apiKey}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (answer) => {
          clearTimeout(upload);
          let text = "";
          answer.on("data", (d) => (text += d));
          answer.on("end", () => {
            resolve({ status: answer.statusCode ?? 0, body: JSON.parse(text) });
            req.destroy();
          });
        },
      );
      // Writing the rest may fail once the gateway has answered and closed; the answer counts.
      req.on("error", (err) => setTimeout(() => reject(err), 1_000));
      req.flushHeaders();
      const upload = setTimeout(() => req.end(body), 1_000);
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });
});

describe("platform configs", () => {
  it("stores iOS, Android and Web credentials and shows only public parts", async () => {
    const app = await createApp();
    const apns = makeApnsKey();
    const sa = makeServiceAccount();
    const vapid = makeVapidKeys();
    secretsSeen.push(apns.p8.split("\n")[1]!, sa.privateKeyPem.split("\n")[1]!, vapid.privateKey);

    const ios = await api("POST", `/v1/apps/${app.id}/platform-config`, {
      platform: "ios",
      apns_p8_key: apns.p8,
      apns_key_id: apns.keyId,
      apns_team_id: apns.teamId,
      apns_topic: app.bundle_id,
      apns_environment: "sandbox",
    });
    expect(ios.status, ios.text).toBe(200);
    expect(ios.body).toMatchObject({
      platform: "ios",
      apns_key_id: apns.keyId,
      apns_team_id: apns.teamId,
      apns_environment: "sandbox",
      fingerprint: expect.any(String),
    });

    const android = await api("POST", `/v1/apps/${app.id}/platform-config`, {
      platform: "android",
      fcm_service_account: JSON.parse(sa.json),
    });
    expect(android.status, android.text).toBe(200);
    expect(android.body).toMatchObject({ platform: "android", project_id: sa.projectId, client_email: sa.clientEmail });

    const web = await api("POST", `/v1/apps/${app.id}/platform-config`, {
      platform: "web",
      vapid_public_key: vapid.publicKey,
      vapid_private_key: vapid.privateKey,
      vapid_subject: "mailto:ops@example.com",
    });
    expect(web.status, web.text).toBe(200);
    expect(web.body).toMatchObject({ platform: "web", vapid_public_key: vapid.publicKey });

    const generated = await api("POST", `/v1/apps/${(await createApp()).id}/platform-config`, {
      platform: "web",
      vapid_subject: "https://example.com/contact",
    });
    expect(generated.status, generated.text).toBe(200);
    expect(Buffer.from(generated.body.vapid_public_key, "base64url")).toHaveLength(65);

    const all = await api("GET", `/v1/apps/${app.id}/platform-config`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      app_id: app.id,
      ios: { platform: "ios" },
      android: { platform: "android" },
      web: { platform: "web" },
    });
    for (const res of [ios, android, web, generated, all]) {
      expect(res.text).not.toContain("PRIVATE KEY");
      expect(res.text).not.toContain(vapid.privateKey);
    }
  });

  it("answers 422 for credentials that do not parse, 400 for a malformed body", async () => {
    const app = await createApp();
    const bad = await api("POST", `/v1/apps/${app.id}/platform-config`, {
      platform: "ios",
      apns_p8_key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
      apns_key_id: "ABCDEFGHIJ",
      apns_team_id: "ABCDEFGHIJ",
    });
    expectError(bad, 422, "UnprocessableEntity");
    expectError(
      await api("POST", `/v1/apps/${app.id}/platform-config`, {
        platform: "android",
        fcm_service_account: { project_id: "p" },
      }),
      422,
      "UnprocessableEntity",
    );
    expectError(
      await api("POST", `/v1/apps/${app.id}/platform-config`, { platform: "blackberry" }),
      400,
      "ValidationError",
    );
  });
});

describe("API keys and scopes", () => {
  it("creates an app-scoped key shown once, limits it to its app, and revokes it", async () => {
    const mine = await createApp();
    const other = await createApp();
    const created = await api("POST", `/v1/apps/${mine.id}/api-keys`, { name: "mobile" });
    expect(created.status, created.text).toBe(201);
    expect(created.body.secret).toMatch(/^hk_live_[A-Za-z0-9]{32,}$/);
    expect(created.body).toMatchObject({ scope: "app", app_id: mine.id, rate_limit_per_minute: 1000 });
    secretsSeen.push(created.body.secret);

    const listed = await api("GET", `/v1/apps/${mine.id}/api-keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(listed.text).not.toContain(created.body.secret);

    const scoped = restClient(stack.gatewayUrls[0]!, created.body.secret);
    expect((await scoped("GET", `/v1/apps/${mine.id}`)).status).toBe(200);
    expectError(await scoped("GET", `/v1/apps/${other.id}`), 403, "Forbidden");
    expectError(
      await scoped("POST", "/v1/apps", { name: "n", platform: "web", bundle_id: "com.scoped.new" }),
      403,
      "Forbidden",
    );
    const otherDevice = await api("POST", "/v1/devices/register", {
      app_id: other.id,
      push_token: apnsToken(),
      platform: "ios",
    });
    expectError(await scoped("GET", `/v1/devices/${otherDevice.body.id}`), 403, "Forbidden");
    expectError(
      await scoped("POST", "/v1/devices/register", { app_id: other.id, push_token: apnsToken(), platform: "ios" }),
      403,
      "Forbidden",
    );
    expectError(await scoped("GET", `/v1/devices/${randomUUID()}`), 404, "NotFound");
    const own = await scoped("POST", "/v1/devices/register", {
      app_id: mine.id,
      push_token: apnsToken(),
      platform: "ios",
    });
    expect(own.status).toBe(200);
    const ownList = await scoped("GET", "/v1/devices");
    expect(ownList.status).toBe(200);
    expect(ownList.body.data.map((d: { id: string }) => d.id)).toEqual([own.body.id]);

    expect((await api("DELETE", `/v1/apps/${mine.id}/api-keys/${created.body.id}`)).status).toBe(204);
    // A gateway answers from its auth cache for at most 300 ms here, then refuses.
    await waitUntil(
      "the revoked key to be refused",
      async () => (await scoped("GET", `/v1/apps/${mine.id}`)).status === 401,
      3_000,
      25,
    );
    expectError(await scoped("GET", `/v1/apps/${mine.id}`), 401, "Unauthorized");
  });
});

describe("devices", () => {
  it("registers, upserts, lists, reads, updates, opts out and in, and deletes", async () => {
    const app = await createApp();
    const token = apnsToken();
    secretsSeen.push(token);
    const reg = await api("POST", "/v1/devices/register", {
      app_id: app.id,
      push_token: token,
      platform: "ios",
      external_id: "user-1",
      language: "de",
      timezone: "Europe/Berlin",
      app_version: "1.2.3",
    });
    expect(reg.status, reg.text).toBe(200);
    expect(reg.body).toMatchObject({
      app_id: app.id,
      platform: "ios",
      external_id: "user-1",
      language: "de",
      timezone: "Europe/Berlin",
      app_version: "1.2.3",
      opted_in: true,
      invalid: false,
      tags: [],
    });

    const again = await api("POST", "/v1/devices/register", {
      app_id: app.id,
      push_token: token.toUpperCase(),
      platform: "ios",
      language: "fr",
    });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(reg.body.id);
    expect(again.body.language).toBe("fr");

    const android = await api("POST", "/v1/devices/register", {
      app_id: app.id,
      push_token: fcmToken(),
      platform: "android",
    });
    expect(android.status, android.text).toBe(200);
    const sub = webSubscription();
    secretsSeen.push(sub.json);
    const web = await api("POST", "/v1/devices/register", {
      app_id: app.id,
      push_token: sub.json,
      platform: "web",
      language: "en",
    });
    expect(web.status, web.text).toBe(200);

    const list = await api("GET", `/v1/devices?app_id=${app.id}&page=1&per_page=2`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 2, total: 3 });
    expect(list.body.data).toHaveLength(2);
    const defaults = await api("GET", `/v1/devices?app_id=${app.id}`);
    expect(defaults.body.per_page).toBe(50);

    const upd = await api("PUT", `/v1/devices/${reg.body.id}`, {
      external_id: "user-2",
      language: "es",
      tags: ["vip", "beta"],
    });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({
      external_id: "user-2",
      language: "es",
      tags: expect.arrayContaining(["vip", "beta"]),
    });

    const out = await api("POST", `/v1/devices/${reg.body.id}/opt-out`);
    expect(out.status).toBe(200);
    expect((await api("GET", `/v1/devices/${reg.body.id}`)).body.opted_in).toBe(false);
    expect((await api("POST", `/v1/devices/${reg.body.id}/opt-in`)).status).toBe(200);
    expect((await api("GET", `/v1/devices/${reg.body.id}`)).body.opted_in).toBe(true);

    expect((await api("DELETE", `/v1/devices/${reg.body.id}`)).status).toBe(204);
    expectError(await api("GET", `/v1/devices/${reg.body.id}`), 404, "NotFound");
  });

  it("turns concurrent registrations of one token into one device", async () => {
    const app = await createApp();
    const token = fcmToken();
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        api("POST", "/v1/devices/register", {
          app_id: app.id,
          push_token: token,
          platform: "android",
          app_version: `1.0.${i}`,
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(25).fill(200));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const list = await api("GET", `/v1/devices?app_id=${app.id}`);
    expect(list.body.total).toBe(1);
  });

  it("rejects bad registrations with 400 and unknown apps with 404", async () => {
    const app = await createApp();
    const bad = [
      { app_id: app.id, push_token: "abc", platform: "ios" },
      { app_id: app.id, push_token: apnsToken(), platform: "windows" },
      { app_id: app.id, push_token: '{"endpoint":"http://[::1"}', platform: "web" },
      { app_id: app.id, push_token: apnsToken(), platform: "ios", language: "xx" },
      { app_id: app.id, push_token: apnsToken(), platform: "ios", timezone: "Mars/Olympus" },
      { app_id: app.id, push_token: apnsToken(), platform: "ios", tags: ["x".repeat(65)] },
      { app_id: "not-a-uuid", push_token: apnsToken(), platform: "ios" },
      { push_token: apnsToken(), platform: "ios" },
    ];
    for (const body of bad) expectError(await api("POST", "/v1/devices/register", body), 400, "ValidationError");
    expectError(
      await api("POST", "/v1/devices/register", { app_id: randomUUID(), push_token: apnsToken(), platform: "ios" }),
      404,
      "NotFound",
    );
    expectError(await api("GET", "/v1/devices"), 400, "ValidationError");
    expectError(await api("GET", `/v1/devices/${randomUUID()}`), 404, "NotFound");
    expectError(await api("PUT", `/v1/devices/${randomUUID()}`, { language: "en" }), 404, "NotFound");
  });

  it("deletes an app's devices when the app is deleted", async () => {
    const app = await createApp();
    const dev = await api("POST", "/v1/devices/register", { app_id: app.id, push_token: apnsToken(), platform: "ios" });
    expect(dev.status).toBe(200);
    expect((await api("DELETE", `/v1/apps/${app.id}`)).status).toBe(204);
    await waitUntil(
      "the device to go with its app",
      async () => (await api("GET", `/v1/devices/${dev.body.id}`)).status === 404,
      10_000,
      200,
    );
  });
});

describe("rate-limit headers", () => {
  it("are on success and on validation errors alike", async () => {
    for (const res of [await api("GET", "/v1/apps"), await api("GET", "/v1/apps?per_page=0")]) {
      expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
      expect(Number(res.headers.get("x-ratelimit-remaining"))).toBeLessThan(1000);
      expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    }
  });
});

describe("secrets", () => {
  it("never reach a log line of any process", () => {
    const logs = stack.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secretsSeen) expect(logs.includes(secret), `a secret leaked into the logs`).toBe(false);
  });

  it("would be found by the scan every stack runs on its logs and metrics when it stops", () => {
    const keys = secretsSeen.filter((s) => s.startsWith("hk_live_"));
    expect(keys.length).toBeGreaterThan(0);
    expect(findSecrets(`{"msg":"x","key":"${keys[0]}"}`, "a sample")).toEqual(["an API key in a sample, line 1"]);
    const pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49";
    expect(findSecrets(JSON.stringify({ p8: pem }), "a sample")).toEqual(["a PEM private key in a sample, line 1"]);
  });
});
