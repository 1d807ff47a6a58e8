import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../../test/support/credential-fixtures.js";
import {
  createApp,
  expectDeleted,
  expectError,
  expectLogFreeOf,
  ISO_TIMESTAMP as ISO,
  useGatewayStack,
} from "./harness.js";

// Apps, platform configs and API keys through the gateway's build(), against the real
// credential and device-registry services.
const gw = useGatewayStack();
const secretsSeen: string[] = [];

describe("apps", () => {
  it("creates, reads, lists, updates and deletes", async () => {
    const created = await gw.call("POST", "/v1/apps", gw.key, {
      name: "Acme",
      platform: "android",
      bundle_id: "com.acme.crud",
    });
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([
      "bundle_id",
      "created_at",
      "id",
      "name",
      "org_id",
      "platform",
      "updated_at",
    ]);
    expect(created.body).toMatchObject({ name: "Acme", platform: "android", bundle_id: "com.acme.crud" });
    expect(created.body.created_at).toMatch(ISO);
    const id = created.body.id as string;

    expect((await gw.call("GET", `/v1/apps/${id}`, gw.key)).body).toEqual(created.body);
    expect((await gw.call("GET", `/v1/apps/${id.toUpperCase()}`, gw.key)).body.id).toBe(id);

    const list = await gw.call("GET", "/v1/apps?page=1&per_page=200", gw.key);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 200, total: expect.any(Number) });
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(id);
    const defaults = await gw.call("GET", "/v1/apps", gw.key);
    expect(defaults.body).toMatchObject({ page: 1, per_page: 50 });
    const paged = await gw.call("GET", "/v1/apps?per_page=1&page=1", gw.key);
    expect(paged.body.data).toHaveLength(1);

    const upd = await gw.call("PUT", `/v1/apps/${id}`, gw.key, { name: "Acme 2", platform: "web" });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body).toMatchObject({ id, name: "Acme 2", platform: "web", bundle_id: "com.acme.crud" });
    expect((await gw.call("GET", `/v1/apps/${id}`, gw.key)).body.name).toBe("Acme 2");
    expectError(await gw.call("PUT", `/v1/apps/${id}`, gw.key, {}), 400, "ValidationError");

    await expectDeleted(gw, gw.key, `/v1/apps/${id}`);
  });

  it("answers 409 for a duplicate bundle_id", async () => {
    const app = await createApp(gw, gw.key);
    expectError(
      await gw.call("POST", "/v1/apps", gw.key, { name: "Again", platform: "ios", bundle_id: app.bundle_id }),
      409,
      "Conflict",
    );
    const other = await createApp(gw, gw.key);
    expectError(await gw.call("PUT", `/v1/apps/${other.id}`, gw.key, { bundle_id: app.bundle_id }), 409, "Conflict");
  });

  it("answers 400 for malformed JSON, wrong types, missing and unknown fields", async () => {
    const bad = [
      "{not json",
      "[]",
      "null",
      { name: 7, platform: "ios", bundle_id: "com.x" },
      { name: "x", platform: "symbian", bundle_id: "com.x" },
      { name: "x", platform: "ios" },
      { name: "x", platform: "ios", bundle_id: "com.x", color: "red" },
      { name: "x".repeat(100_000), platform: "ios", bundle_id: "com.x" },
      { name: "x", platform: "ios", bundle_id: "not a bundle id" },
    ];
    for (const body of bad) expectError(await gw.call("POST", "/v1/apps", gw.key, body), 400, "ValidationError");
    const details = await gw.call("POST", "/v1/apps", gw.key, { name: "x", platform: "ios" });
    expect(details.body.details).toEqual([{ field: "/bundle_id", message: "is required" }]);
    expectError(
      await gw.call("POST", "/v1/apps", gw.key, "", { "content-type": "application/json" }),
      400,
      "ValidationError",
    );
  });

  it("answers 415 for a body that is not JSON", async () => {
    const res = await gw.call("POST", "/v1/apps", gw.key, '{"name":"x"}', { "content-type": "text/plain" });
    expectError(res, 415, "UnsupportedMediaType");
    const form = await gw.app.inject({
      method: "POST",
      url: "/v1/apps",
      headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/x-www-form-urlencoded" },
      payload: "name=x",
    });
    expect(form.statusCode).toBe(415);
    expect(form.json()).toMatchObject({ error: "UnsupportedMediaType" });
  });

  it("answers 400 for bad paging", async () => {
    for (const q of ["per_page=0", "per_page=201", "per_page=abc", "page=0", "page=-1", "page=1.5"]) {
      expectError(await gw.call("GET", `/v1/apps?${q}`, gw.key), 400, "ValidationError");
    }
  });

  it("answers 413 for a body over the limit", async () => {
    const res = await gw.call("POST", "/v1/apps", gw.key, {
      name: "a",
      platform: "ios",
      bundle_id: "com.big",
      pad: "x".repeat(2 * 1024 * 1024),
    });
    expectError(res, 413, "PayloadTooLarge");
    expect(res.headers["x-ratelimit-limit"]).toBe("1000");
  });

  it("answers 404 for unknown and non-UUID ids and unknown routes", async () => {
    expectError(await gw.call("GET", `/v1/apps/${randomUUID()}`, gw.key), 404, "NotFound");
    expectError(await gw.call("GET", "/v1/apps/not-a-uuid", gw.key), 404, "NotFound");
    expectError(await gw.call("PUT", "/v1/apps/42", gw.key, { name: "x" }), 404, "NotFound");
    expectError(await gw.call("GET", "/v1/nothing-here", gw.key), 404, "NotFound");
    expectError(await gw.call("PATCH", "/v1/apps", gw.key, {}), 404, "NotFound");
    expectError(await gw.call("GET", "/nothing", undefined), 404, "NotFound");
  });
});

describe("platform configs", () => {
  it("stores iOS, Android and Web credentials and shows only public parts", async () => {
    const app = await createApp(gw, gw.key);
    const apns = makeApnsKey();
    const sa = makeServiceAccount();
    const vapid = makeVapidKeys();
    secretsSeen.push(apns.p8.split("\n")[1]!, sa.privateKeyPem.split("\n")[1]!, vapid.privateKey);

    const ios = await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
      platform: "ios",
      apns_p8_key: apns.p8,
      apns_key_id: apns.keyId,
      apns_team_id: apns.teamId,
    });
    expect(ios.status, ios.text).toBe(200);
    expect(ios.body).toEqual({
      platform: "ios",
      apns_key_id: apns.keyId,
      apns_team_id: apns.teamId,
      apns_topic: app.bundle_id,
      apns_environment: "production",
      fingerprint: expect.any(String),
      updated_at: expect.stringMatching(ISO),
    });

    const android = await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
      platform: "android",
      fcm_service_account: JSON.parse(sa.json),
    });
    expect(android.status, android.text).toBe(200);
    expect(android.body).toEqual({
      platform: "android",
      project_id: sa.projectId,
      client_email: sa.clientEmail,
      token_uri: "https://oauth2.googleapis.com/token",
      fingerprint: expect.any(String),
      updated_at: expect.stringMatching(ISO),
    });
    const asText = await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
      platform: "android",
      fcm_service_account: sa.json,
    });
    expect(asText.status, asText.text).toBe(200);
    expect(asText.body).toMatchObject({ project_id: sa.projectId, client_email: sa.clientEmail });

    const web = await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
      platform: "web",
      vapid_public_key: vapid.publicKey,
      vapid_private_key: vapid.privateKey,
      vapid_subject: "mailto:ops@example.com",
    });
    expect(web.status, web.text).toBe(200);
    expect(web.body).toEqual({
      platform: "web",
      vapid_public_key: vapid.publicKey,
      vapid_subject: "mailto:ops@example.com",
      fingerprint: expect.any(String),
      updated_at: expect.stringMatching(ISO),
    });

    const all = await gw.call("GET", `/v1/apps/${app.id}/platform-config`, gw.key);
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ app_id: app.id, ios: ios.body, android: asText.body, web: web.body });
    for (const res of [ios, android, asText, web, all]) {
      expect(res.text).not.toContain("PRIVATE KEY");
      expect(res.text).not.toContain(vapid.privateKey);
    }

    const fresh = await createApp(gw, gw.key, "web");
    expect((await gw.call("GET", `/v1/apps/${fresh.id}/platform-config`, gw.key)).body).toEqual({
      app_id: fresh.id,
      ios: null,
      android: null,
      web: null,
    });
    const generated = await gw.call("POST", `/v1/apps/${fresh.id}/platform-config`, gw.key, {
      platform: "web",
      vapid_subject: "https://example.com/contact",
    });
    expect(generated.status, generated.text).toBe(200);
    expect(Buffer.from(generated.body.vapid_public_key, "base64url")).toHaveLength(65);
  });

  it("answers 422 for credentials that do not parse and 400 for a malformed body", async () => {
    const app = await createApp(gw, gw.key);
    const p8 = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
    expectError(
      await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
        platform: "ios",
        apns_p8_key: p8,
        apns_key_id: "ABCDEFGHIJ",
        apns_team_id: "ABCDEFGHIJ",
      }),
      422,
      "UnprocessableEntity",
    );
    expectError(
      await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
        platform: "android",
        fcm_service_account: { project_id: "p" },
      }),
      422,
      "UnprocessableEntity",
    );
    expectError(
      await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, { platform: "blackberry" }),
      400,
      "ValidationError",
    );
    expectError(
      await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, { platform: "web" }),
      400,
      "ValidationError",
    );
    expectError(
      await gw.call("POST", `/v1/apps/${app.id}/platform-config`, gw.key, {
        platform: "ios",
        apns_p8_key: p8,
        apns_key_id: "A",
        apns_team_id: "B",
        apns_environment: "staging",
      }),
      400,
      "ValidationError",
    );
    expectError(
      await gw.call("POST", `/v1/apps/${randomUUID()}/platform-config`, gw.key, {
        platform: "web",
        vapid_subject: "mailto:a@b.c",
      }),
      404,
      "NotFound",
    );
  });
});

describe("API keys", () => {
  it("creates keys shown once, lists them without secrets and revokes them", async () => {
    const app = await createApp(gw, gw.key);
    const created = await gw.call("POST", `/v1/apps/${app.id}/api-keys`, gw.key, { name: "mobile" });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: "mobile",
      scope: "app",
      kind: "server",
      app_id: app.id,
      prefix: created.body.secret.slice(0, 12),
      rate_limit_per_minute: 1000,
      created_at: expect.stringMatching(ISO),
      secret: expect.stringMatching(/^hk_live_[A-Za-z0-9]{32,}$/),
    });
    secretsSeen.push(created.body.secret);
    const org = await gw.call("POST", `/v1/apps/${app.id}/api-keys`, gw.key, {
      name: "backend",
      scope: "org",
      rate_limit_per_minute: 50,
    });
    expect(org.status, org.text).toBe(201);
    expect(org.body).toMatchObject({ scope: "org", rate_limit_per_minute: 50 });
    secretsSeen.push(org.body.secret);

    const listed = await gw.call("GET", `/v1/apps/${app.id}/api-keys`, gw.key);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ page: 1, per_page: 50, total: 2 });
    expect(listed.body.data.map((k: { id: string }) => k.id).sort()).toEqual([created.body.id, org.body.id].sort());
    expect(listed.text).not.toContain(created.body.secret);
    expect(listed.body.data[0]).not.toHaveProperty("secret");

    expect((await gw.call("DELETE", `/v1/apps/${app.id}/api-keys/${created.body.id}`, gw.key)).status).toBe(204);
    expectError(await gw.call("DELETE", `/v1/apps/${app.id}/api-keys/${created.body.id}`, gw.key), 404, "NotFound");
    expectError(await gw.call("DELETE", `/v1/apps/${app.id}/api-keys/${randomUUID()}`, gw.key), 404, "NotFound");
  });

  it("validates key bodies", async () => {
    const app = await createApp(gw, gw.key);
    for (const body of [
      {},
      { name: "" },
      { name: "k", scope: "global" },
      { name: "k", rate_limit_per_minute: 0 },
      { name: "k", rate_limit_per_minute: 1_000_001 },
      { name: "k", rate_limit_per_minute: "10" },
    ]) {
      expectError(await gw.call("POST", `/v1/apps/${app.id}/api-keys`, gw.key, body), 400, "ValidationError");
    }
  });
});

describe("secrets", () => {
  it("never reach the gateway's log", () => {
    expectLogFreeOf(gw, [gw.key, ...secretsSeen]);
  });
});
