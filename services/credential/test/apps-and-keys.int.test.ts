import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { KeyScope } from "@herald/proto/credential";
import { describe, expect, it } from "vitest";
import { generateSecret } from "../src/api-key-secret.js";
import { failure, rawPool, testConfig, useService } from "./harness.js";

const config = testConfig({ bootstrapApiKey: generateSecret(), defaultRateLimit: 1000 });
const svc = useService(config);
/** Every secret the service handed out or was given: none may reach a log line. */
const secrets: string[] = [config.bootstrapApiKey!];

const newApp = (bundleId: string, platform = Platform.IOS) =>
  svc.client.createApp({ orgId: svc.orgId, name: `  App ${bundleId}  `, platform, bundleId }).then((r) => r.app!);

describe("apps", () => {
  it("creates, reads, updates and lists apps", async () => {
    const app = await newApp("com.example.crud");
    expect(app).toMatchObject({
      orgId: svc.orgId,
      name: "App com.example.crud",
      platform: Platform.IOS,
      bundleId: "com.example.crud",
    });
    expect((await svc.client.getApp({ appId: app.id })).app).toEqual(app);

    const updated = (await svc.client.updateApp({ appId: app.id, name: "Renamed", platform: Platform.WEB })).app!;
    expect(updated).toMatchObject({
      id: app.id,
      name: "Renamed",
      platform: Platform.WEB,
      bundleId: "com.example.crud",
    });
    expect(Number(updated.updatedAt!.seconds) * 1e3 + updated.updatedAt!.nanos / 1e6).toBeGreaterThanOrEqual(
      Number(app.updatedAt!.seconds) * 1e3 + app.updatedAt!.nanos / 1e6,
    );

    const second = await newApp("com.example.crud2", Platform.ANDROID);
    const third = await newApp("com.example.crud3", Platform.WEB);
    const page1 = await svc.client.listApps({ orgId: svc.orgId, page: { page: 1, perPage: 2 } });
    expect(page1.apps.map((a) => a.id)).toEqual([app.id, second.id]);
    expect(page1.page).toMatchObject({ page: 1, perPage: 2, total: 3n });
    const page2 = await svc.client.listApps({ orgId: svc.orgId, page: { page: 2, perPage: 2 } });
    expect(page2.apps.map((a) => a.id)).toEqual([third.id]);
    const beyond = await svc.client.listApps({ orgId: svc.orgId, page: { page: 9, perPage: 2 } });
    expect(beyond.apps).toEqual([]);
    expect(beyond.page?.total).toBe(3n);

    const only = await svc.client.listApps({ orgId: svc.orgId, appId: second.id, page: { page: 1, perPage: 50 } });
    expect(only.apps.map((a) => a.id)).toEqual([second.id]);
    expect(only.page?.total).toBe(1n);
    expect((await svc.client.listApps({ orgId: svc.orgId, appId: "nope" })).apps).toEqual([]);
  });

  it("rejects a bundle_id already used in the org", async () => {
    await newApp("com.example.dup");
    const err = await failure(newApp("com.example.dup"));
    expect(err.code).toBe(Code.AlreadyExists);
    expect(err.rawMessage).toBe("an app with bundle_id com.example.dup already exists");
    const other = await newApp("com.example.dup-other");
    const renamed = await failure(svc.client.updateApp({ appId: other.id, bundleId: "com.example.dup" }));
    expect(renamed.code).toBe(Code.AlreadyExists);
  });

  it("validates names, platforms and bundle ids", async () => {
    const cases = [
      { orgId: svc.orgId, name: "   ", platform: Platform.IOS, bundleId: "com.a" },
      { orgId: svc.orgId, name: "x".repeat(201), platform: Platform.IOS, bundleId: "com.a" },
      { orgId: svc.orgId, name: "ok", platform: Platform.UNSPECIFIED, bundleId: "com.a" },
      { orgId: svc.orgId, name: "ok", platform: Platform.IOS, bundleId: ".com.a" },
      { orgId: svc.orgId, name: "ok", platform: Platform.IOS, bundleId: "com a" },
      { orgId: svc.orgId, name: "ok", platform: Platform.IOS, bundleId: "a".repeat(256) },
      { orgId: svc.orgId, name: "ok", platform: Platform.IOS, bundleId: "" },
    ];
    for (const req of cases) expect((await failure(svc.client.createApp(req))).code).toBe(Code.InvalidArgument);
    expect((await failure(svc.client.listApps({ orgId: svc.orgId, page: { page: 1, perPage: 201 } }))).code).toBe(
      Code.InvalidArgument,
    );
  });

  it("answers NOT_FOUND for unknown and malformed ids, never INTERNAL", async () => {
    for (const appId of ["6f1c2b9e-1111-4222-8333-444455556666", "not-a-uuid", "", "'; DROP TABLE apps; --"]) {
      expect((await failure(svc.client.getApp({ appId }))).code).toBe(Code.NotFound);
      expect((await failure(svc.client.updateApp({ appId, name: "x" }))).code).toBe(Code.NotFound);
      expect((await failure(svc.client.deleteApp({ appId }))).code).toBe(Code.NotFound);
      expect((await failure(svc.client.listApiKeys({ appId }))).code).toBe(Code.NotFound);
      expect((await failure(svc.client.createApiKey({ appId, name: "k" }))).code).toBe(Code.NotFound);
    }
    const unknownOrg = {
      orgId: "6f1c2b9e-1111-4222-8333-444455556666",
      name: "x",
      platform: Platform.IOS,
      bundleId: "a",
    };
    expect((await failure(svc.client.createApp(unknownOrg))).code).toBe(Code.NotFound);
    expect((await failure(svc.client.createApp({ ...unknownOrg, orgId: "bad" }))).code).toBe(Code.NotFound);
  });
});

describe("API keys", () => {
  it("creates keys that verify to their principal, with the default or their own rate limit", async () => {
    const app = await newApp("com.example.keys");
    const appKey = await svc.client.createApiKey({ appId: app.id, name: " server " });
    secrets.push(appKey.secret);
    expect(appKey.secret).toMatch(/^hk_live_[A-Za-z0-9]{40}$/);
    expect(appKey.key).toMatchObject({
      orgId: svc.orgId,
      appId: app.id,
      scope: KeyScope.APP,
      name: "server",
      prefix: appKey.secret.slice(0, 12),
      rateLimitPerMinute: 1000,
    });
    expect(appKey.key?.revokedAt).toBeUndefined();
    const { principal } = await svc.client.verifyApiKey({ secret: appKey.secret });
    expect(principal).toMatchObject({
      orgId: svc.orgId,
      scope: KeyScope.APP,
      appId: app.id,
      keyId: appKey.key!.id,
      rateLimitPerMinute: 1000,
    });

    const orgKey = await svc.client.createApiKey({
      appId: app.id,
      name: "ops",
      scope: KeyScope.ORG,
      rateLimitPerMinute: 42,
    });
    secrets.push(orgKey.secret);
    const orgPrincipal = (await svc.client.verifyApiKey({ secret: orgKey.secret })).principal!;
    expect(orgPrincipal).toMatchObject({
      orgId: svc.orgId,
      scope: KeyScope.ORG,
      keyId: orgKey.key!.id,
      rateLimitPerMinute: 42,
    });
    expect(orgPrincipal.appId).toBeUndefined();

    const listed = await svc.client.listApiKeys({ appId: app.id, page: { page: 1, perPage: 10 } });
    expect(listed.keys.map((k) => k.id)).toEqual([appKey.key!.id, orgKey.key!.id]);
    expect(listed.page?.total).toBe(2n);
    expect(JSON.stringify(listed.keys.map((k) => k.prefix))).not.toContain(appKey.secret);
  });

  it("validates name, scope and rate limit", async () => {
    const app = await newApp("com.example.keycheck");
    for (const req of [
      { appId: app.id, name: "" },
      { appId: app.id, name: "x".repeat(101) },
      { appId: app.id, name: "k", rateLimitPerMinute: 1_000_001 },
      { appId: app.id, name: "k", scope: 7 as KeyScope },
    ]) {
      expect((await failure(svc.client.createApiKey(req))).code).toBe(Code.InvalidArgument);
    }
    const max = await svc.client.createApiKey({ appId: app.id, name: "k", rateLimitPerMinute: 1_000_000 });
    secrets.push(max.secret);
    expect(max.key?.rateLimitPerMinute).toBe(1_000_000);
  });

  it("revokes: the key stops verifying and leaves the list", async () => {
    const app = await newApp("com.example.revoke");
    const other = await newApp("com.example.revoke-other");
    const created = await svc.client.createApiKey({ appId: app.id, name: "temp" });
    secrets.push(created.secret);
    const keyId = created.key!.id;

    expect((await failure(svc.client.revokeApiKey({ appId: other.id, keyId }))).code).toBe(Code.NotFound);
    expect((await failure(svc.client.revokeApiKey({ appId: app.id, keyId: "nope" }))).code).toBe(Code.NotFound);
    await svc.client.revokeApiKey({ appId: app.id, keyId });

    const err = await failure(svc.client.verifyApiKey({ secret: created.secret }));
    expect(err).toMatchObject({ code: Code.Unauthenticated, rawMessage: "invalid API key" });
    expect((await svc.client.listApiKeys({ appId: app.id })).keys).toEqual([]);
    expect((await failure(svc.client.revokeApiKey({ appId: app.id, keyId }))).code).toBe(Code.NotFound);
  });

  it("on app deletion drops app-scoped keys and keeps org-scoped ones without an app", async () => {
    const app = await newApp("com.example.delkeys");
    const appKey = await svc.client.createApiKey({ appId: app.id, name: "app" });
    const orgKey = await svc.client.createApiKey({ appId: app.id, name: "org", scope: KeyScope.ORG });
    secrets.push(appKey.secret, orgKey.secret);

    await svc.client.deleteApp({ appId: app.id });
    expect((await failure(svc.client.getApp({ appId: app.id }))).code).toBe(Code.NotFound);
    expect((await failure(svc.client.verifyApiKey({ secret: appKey.secret }))).code).toBe(Code.Unauthenticated);
    const survivor = (await svc.client.verifyApiKey({ secret: orgKey.secret })).principal!;
    expect(survivor).toMatchObject({ orgId: svc.orgId, scope: KeyScope.ORG, keyId: orgKey.key!.id });
    const pool = rawPool(config);
    const { rows } = await pool
      .query("SELECT app_id FROM api_keys WHERE id = $1", [orgKey.key!.id])
      .finally(() => pool.end());
    expect(rows).toEqual([{ app_id: null }]);
    expect((await failure(svc.client.deleteApp({ appId: app.id }))).code).toBe(Code.NotFound);
  });

  it("never logs a secret", () => {
    const logs = svc.logs.text();
    expect(logs).toContain("API key created");
    expect(logs).not.toContain("rpc failed");
    for (const secret of secrets) expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(/hk_live_[A-Za-z0-9]{32}/);
  });
});
