import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { ApiKeyKind, KeyScope } from "@herald/proto/credential";
import { beforeAll, describe, expect, it } from "vitest";
import { generateSecret, hashSecret } from "../src/api-key-secret.js";
import { failure, rawPool, testConfig, useService } from "./harness.js";

const config = testConfig({ bootstrapApiKey: generateSecret(), defaultRateLimit: 1000, clientKeyRateLimit: 60 });
const svc = useService(config);
let appId: string;

beforeAll(async () => {
  appId = (
    await svc.client.createApp({
      orgId: svc.orgId,
      name: "Client",
      platform: Platform.WEB,
      bundleId: "com.example.pub",
    })
  ).app!.id;
});

describe("API key kinds", () => {
  it("creates server keys by default and says so", async () => {
    const { key, secret } = await svc.client.createApiKey({ appId, name: "backend", scope: KeyScope.APP });
    expect(secret).toMatch(/^hk_live_[A-Za-z0-9]{40}$/);
    expect(key).toMatchObject({ kind: ApiKeyKind.SERVER, prefix: secret.slice(0, 12), rateLimitPerMinute: 1000 });
    const { principal } = await svc.client.verifyApiKey({ secret });
    expect(principal).toMatchObject({ kind: ApiKeyKind.SERVER, scope: KeyScope.APP, appId });
    const bootstrap = await svc.client.verifyApiKey({ secret: config.bootstrapApiKey! });
    expect(bootstrap.principal).toMatchObject({ kind: ApiKeyKind.SERVER, scope: KeyScope.ORG });
  });

  it("creates app-scoped client keys with an hk_pub_ secret and their own default limit", async () => {
    const { key, secret } = await svc.client.createApiKey({
      appId,
      name: "ios app",
      scope: KeyScope.APP,
      kind: ApiKeyKind.CLIENT,
    });
    expect(secret).toMatch(/^hk_pub_[A-Za-z0-9]{40}$/);
    expect(key).toMatchObject({
      kind: ApiKeyKind.CLIENT,
      scope: KeyScope.APP,
      appId,
      prefix: secret.slice(0, 11),
      rateLimitPerMinute: 60,
    });
    const { principal } = await svc.client.verifyApiKey({ secret });
    expect(principal).toMatchObject({
      kind: ApiKeyKind.CLIENT,
      scope: KeyScope.APP,
      appId,
      keyId: key!.id,
      rateLimitPerMinute: 60,
    });
    const own = await svc.client.createApiKey({
      appId,
      name: "limited",
      kind: ApiKeyKind.CLIENT,
      rateLimitPerMinute: 5,
    });
    expect(own.key).toMatchObject({ kind: ApiKeyKind.CLIENT, scope: KeyScope.APP, rateLimitPerMinute: 5 });
    const listed = (await svc.client.listApiKeys({ appId, page: { page: 1, perPage: 100 } })).keys;
    expect(listed.find((k) => k.id === key!.id)).toMatchObject({ kind: ApiKeyKind.CLIENT });
  });

  it("refuses org-scoped client keys and unknown kinds", async () => {
    const org = await failure(
      svc.client.createApiKey({ appId, name: "nope", scope: KeyScope.ORG, kind: ApiKeyKind.CLIENT }),
    );
    expect(org.code).toBe(Code.InvalidArgument);
    expect(org.rawMessage).toBe("a client key must be app-scoped");
    const unknown = await failure(svc.client.createApiKey({ appId, name: "nope", kind: 7 as ApiKeyKind }));
    expect(unknown.code).toBe(Code.InvalidArgument);
  });

  it("has a database CHECK that keeps client keys app-scoped", async () => {
    const pool = rawPool(config);
    try {
      const insert = (kind: string, scope: string) =>
        pool.query(
          `INSERT INTO api_keys (org_id, app_id, scope, kind, name, prefix, secret_hash)
           VALUES ($1, $2, $3, $4, 'raw', 'hk_pub_x', $5)`,
          [svc.orgId, scope === "app" ? appId : null, scope, kind, hashSecret(generateSecret("client"))],
        );
      await expect(insert("client", "org")).rejects.toMatchObject({ code: "23514" });
      await expect(insert("public", "app")).rejects.toMatchObject({ code: "23514" });
      await expect(insert("client", "app")).resolves.toMatchObject({ rowCount: 1 });
      // Rows written without a kind (every key made before kinds existed) are server keys.
      const { rows } = await pool.query<{ kind: string }>(
        `INSERT INTO api_keys (org_id, app_id, scope, name, prefix, secret_hash)
         VALUES ($1, NULL, 'org', 'old', 'hk_live_x', $2) RETURNING kind`,
        [svc.orgId, hashSecret(generateSecret())],
      );
      expect(rows[0]!.kind).toBe("server");
    } finally {
      await pool.end();
    }
  });
});
