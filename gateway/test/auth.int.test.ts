import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apnsToken } from "../../test/support/device-tokens.js";
import { uniqueName } from "../../test/support/unique.js";
import { waitUntil } from "../../test/support/wait.js";
import { createApp as createAppWith, expectError, startGateway, useGatewayStack } from "./harness.js";

// Authentication (API keys and session JWTs), scopes and rate limiting through the
// gateway, against the real credential and device-registry services.
const ISSUER = "https://auth.herald.test";
const AUDIENCE = "herald-admin";

let jwks: http.Server;
let signingKey: CryptoKey;
let orgId: string;

// The JWKS endpoint first: the gateway's config names its port.
beforeAll(async () => {
  const pair = await generateKeyPair("ES256");
  signingKey = pair.privateKey;
  jwks = await serveJwks({ ...(await exportJWK(pair.publicKey)), kid: "test-key", alg: "ES256", use: "sig" });
});
afterAll(async () => {
  await new Promise((resolve) => jwks?.close(resolve));
});

const gw = useGatewayStack(() => ({
  jwtIssuer: ISSUER,
  jwtJwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
  jwtAudience: AUDIENCE,
}));
const key = () => gw.key;

const createApp = () => createAppWith(gw, key());

async function createKey(appId: string, body: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const res = await gw.call("POST", `/v1/apps/${appId}/api-keys`, key(), { name: "k", ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** A JWKS endpoint like an OAuth server's, publishing one ES256 public key. */
async function serveJwks(publicJwk: JWK): Promise<http.Server> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

function sessionToken(
  claims: Record<string, unknown>,
  opts: { key?: CryptoKey; exp?: string | number; iss?: string; aud?: string } = {},
) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: "test-key" })
    .setIssuer(opts.iss ?? ISSUER)
    .setAudience(opts.aud ?? AUDIENCE)
    .setSubject("user-1")
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? "5m")
    .sign(opts.key ?? signingKey);
}

beforeAll(async () => {
  orgId = (await createApp()).org_id;
});

describe("API keys", () => {
  it("answers 401 with a Bearer challenge when credentials are missing or wrong", async () => {
    const cases: [string | undefined, Record<string, string>][] = [
      [undefined, {}],
      [undefined, { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` }],
      [undefined, { authorization: "Bearer" }],
      [undefined, { authorization: "Bearer two tokens" }],
      [`hk_live_${"x".repeat(40)}`, {}],
      ["hk_live_short", {}],
      ["not-a-key", {}],
    ];
    for (const [token, headers] of cases) {
      const res = await gw.call("GET", "/v1/apps", token, undefined, headers);
      expectError(res, 401, "Unauthorized");
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
    }
  });

  it("stops accepting a revoked key: at once on this replica, within the cache TTL on others", async () => {
    const app = await createApp();
    const created = await createKey(app.id);
    const other = await startGateway(gw.backends, { authCacheMs: 300 });
    try {
      expect((await gw.call("GET", `/v1/apps/${app.id}`, created.secret)).status).toBe(200);
      expect((await other.call("GET", `/v1/apps/${app.id}`, created.secret)).status).toBe(200);
      expect((await gw.call("DELETE", `/v1/apps/${app.id}/api-keys/${created.id}`, key())).status).toBe(204);
      expectError(await gw.call("GET", `/v1/apps/${app.id}`, created.secret), 401, "Unauthorized");
      // The other replica answers from its cache for at most authCacheMs (300 ms), then refuses.
      const refused = () => other.call("GET", `/v1/apps/${app.id}`, created.secret);
      await waitUntil(
        "the other replica to refuse the revoked key",
        async () => (await refused()).status === 401,
        2_000,
        25,
      );
      expectError(await refused(), 401, "Unauthorized");
    } finally {
      await other.close();
    }
  });
});

describe("scopes", () => {
  it("confines an app-scoped key to its own app and its devices", async () => {
    const mine = await createApp();
    const other = await createApp();
    const scoped = (await createKey(mine.id)).secret;
    const otherDevice = await gw.call("POST", "/v1/devices/register", key(), {
      app_id: other.id,
      push_token: apnsToken(),
      platform: "ios",
    });
    expect(otherDevice.status).toBe(200);

    expect((await gw.call("GET", `/v1/apps/${mine.id}`, scoped)).status).toBe(200);
    const list = await gw.call("GET", "/v1/apps", scoped);
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([mine.id]);

    expectError(await gw.call("GET", `/v1/apps/${other.id}`, scoped), 403, "Forbidden");
    expectError(await gw.call("PUT", `/v1/apps/${other.id}`, scoped, { name: "mine now" }), 403, "Forbidden");
    expectError(await gw.call("GET", `/v1/apps/${other.id}/platform-config`, scoped), 403, "Forbidden");
    expectError(await gw.call("GET", `/v1/apps/${other.id}/api-keys`, scoped), 403, "Forbidden");
    expectError(await gw.call("GET", `/v1/devices/${otherDevice.body.id}`, scoped), 403, "Forbidden");
    expectError(
      await gw.call("PUT", `/v1/devices/${otherDevice.body.id}`, scoped, { language: "en" }),
      403,
      "Forbidden",
    );
    expectError(await gw.call("DELETE", `/v1/devices/${otherDevice.body.id}`, scoped), 403, "Forbidden");
    expectError(await gw.call("POST", `/v1/devices/${otherDevice.body.id}/opt-out`, scoped), 403, "Forbidden");
    expectError(await gw.call("GET", `/v1/devices?app_id=${other.id}`, scoped), 403, "Forbidden");
    expectError(
      await gw.call("POST", "/v1/devices/register", scoped, {
        app_id: other.id,
        push_token: apnsToken(),
        platform: "ios",
      }),
      403,
      "Forbidden",
    );
    expectError(await gw.call("GET", `/v1/devices/${randomUUID()}`, scoped), 404, "NotFound");

    // Organization-wide actions need an organization-scoped key.
    expectError(
      await gw.call("POST", "/v1/apps", scoped, { name: "n", platform: "web", bundle_id: "com.scoped.new" }),
      403,
      "Forbidden",
    );
    expectError(await gw.call("DELETE", `/v1/apps/${mine.id}`, scoped), 403, "Forbidden");
    expectError(
      await gw.call("POST", `/v1/apps/${mine.id}/api-keys`, scoped, { name: "escalate", scope: "org" }),
      403,
      "Forbidden",
    );
    const orgKey = await createKey(mine.id, { scope: "org" });
    expectError(await gw.call("DELETE", `/v1/apps/${mine.id}/api-keys/${orgKey.id}`, scoped), 403, "Forbidden");

    // Within its app it may do the rest, including minting and revoking app keys.
    const own = await gw.call("POST", "/v1/devices/register", scoped, {
      app_id: mine.id,
      push_token: apnsToken(),
      platform: "ios",
    });
    expect(own.status, own.text).toBe(200);
    const ownList = await gw.call("GET", "/v1/devices", scoped);
    expect(ownList.body.data.map((d: { id: string }) => d.id)).toEqual([own.body.id]);
    const sibling = await gw.call("POST", `/v1/apps/${mine.id}/api-keys`, scoped, { name: "sibling" });
    expect(sibling.status).toBe(201);
    expect((await gw.call("DELETE", `/v1/apps/${mine.id}/api-keys/${sibling.body.id}`, scoped)).status).toBe(204);
  });
});

describe("session JWTs", () => {
  it("accepts an ES256 token of the configured issuer with org scope", async () => {
    const token = await sessionToken({ org_id: orgId });
    const list = await gw.call("GET", "/v1/apps", token);
    expect(list.status, list.text).toBe(200);
    expect(list.headers["x-ratelimit-limit"]).toBe("1000");
    const created = await gw.call("POST", "/v1/apps", token, {
      name: "From JWT",
      platform: "web",
      bundle_id: `com.jwt.${randomUUID().slice(0, 6)}`,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.org_id).toBe(orgId);
  });

  it("narrows a token with app_id to that app", async () => {
    const mine = await createApp();
    const other = await createApp();
    const token = await sessionToken({ org_id: orgId, app_id: mine.id });
    expect((await gw.call("GET", `/v1/apps/${mine.id}`, token)).status).toBe(200);
    expectError(await gw.call("GET", `/v1/apps/${other.id}`, token), 403, "Forbidden");
  });

  it("keeps a token of another organization out of this one's apps", async () => {
    const app = await createApp();
    const token = await sessionToken({ org_id: randomUUID() });
    expectError(await gw.call("GET", `/v1/apps/${app.id}`, token), 403, "Forbidden");
    expect((await gw.call("GET", "/v1/apps", token)).body.data).toEqual([]);
  });

  it("rejects tokens signed by another key, expired, or for someone else", async () => {
    const stranger = await generateKeyPair("ES256");
    const bad = [
      await sessionToken({ org_id: orgId }, { key: stranger.privateKey }),
      await sessionToken({ org_id: orgId }, { exp: Math.floor(Date.now() / 1000) - 60 }),
      await sessionToken({ org_id: orgId }, { iss: "https://evil.test" }),
      await sessionToken({ org_id: orgId }, { aud: "another-api" }),
      await sessionToken({}),
      await sessionToken({ org_id: "not-a-uuid" }),
      await sessionToken({ org_id: orgId, app_id: 42 }),
      "eyJhbGciOiJub25lIn0.eyJvcmdfaWQiOiJ4In0.",
    ];
    for (const token of bad) {
      const res = await gw.call("GET", "/v1/apps", token);
      expectError(res, 401, "Unauthorized");
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    }
  });

  it("answer 503, not 401, while the key set cannot be fetched", async () => {
    const unreachable = await startGateway(gw.backends, {
      jwtIssuer: ISSUER,
      jwtJwksUrl: "http://127.0.0.1:9/jwks.json",
    });
    try {
      expectError(
        await unreachable.call("GET", "/v1/apps", await sessionToken({ org_id: orgId })),
        503,
        "ServiceUnavailable",
      );
    } finally {
      await unreachable.close();
    }
  });

  it("are refused when session tokens are not configured", async () => {
    const plain = await startGateway(gw.backends);
    try {
      expectError(await plain.call("GET", "/v1/apps", await sessionToken({ org_id: orgId })), 401, "Unauthorized");
    } finally {
      await plain.close();
    }
  });
});

describe("rate limiting", () => {
  it("holds a key's own limit exactly across two gateway replicas sharing Redis", async () => {
    const app = await createApp();
    const limited = await createKey(app.id, { rate_limit_per_minute: 5 });
    const prefix = `${uniqueName("gwshared")}:`;
    const replicas = [
      await startGateway(gw.backends, { redisKeyPrefix: prefix }),
      await startGateway(gw.backends, { redisKeyPrefix: prefix }),
    ];
    try {
      const resets = new Set<string>();
      for (let i = 0; i < 5; i++) {
        // Alternate replicas, and successes with client errors: all of them count.
        const url = i % 2 ? `/v1/apps/${app.id}` : "/v1/apps?per_page=0";
        const res = await replicas[i % 2]!.call("GET", url, limited.secret);
        expect(res.status).toBe(i % 2 ? 200 : 400);
        expect(res.headers["x-ratelimit-limit"]).toBe("5");
        expect(res.headers["x-ratelimit-remaining"]).toBe(String(4 - i));
        resets.add(String(res.headers["x-ratelimit-reset"]));
      }
      for (const replica of replicas) {
        const refused = await replica.call("GET", `/v1/apps/${app.id}`, limited.secret);
        expectError(refused, 429, "RateLimited");
        expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
        const retryAfter = Number(refused.headers["retry-after"]);
        expect(Number.isInteger(retryAfter)).toBe(true);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        const reset = Number(refused.headers["x-ratelimit-reset"]);
        expect(Math.abs(reset - Number([...resets][0]))).toBeLessThanOrEqual(1);
        expect(reset - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(retryAfter - 1);
      }
      // Other keys keep their own windows.
      expect((await replicas[0]!.call("GET", "/v1/apps", key())).status).toBe(200);
      const metrics = await replicas[0]!.call("GET", "/metrics");
      expect(metrics.text).toMatch(/herald_gateway_rate_limited_total\{[^}]*\} 1/);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it("fails open, with a full window in the headers, when Redis is unreachable", async () => {
    // A connection that cannot answer: what a Redis outage looks like to the limiter.
    const dead = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    dead.on("error", () => undefined);
    const broken = await startGateway(gw.backends, {}, { redis: dead });
    try {
      const res = await broken.call("GET", "/v1/apps", key());
      expect(res.status).toBe(200);
      expect(res.headers["x-ratelimit-limit"]).toBe("1000");
      expect(res.headers["x-ratelimit-remaining"]).toBe("1000");
      expect((await broken.call("GET", "/metrics")).text).toMatch(
        /herald_gateway_rate_limit_store_errors_total\{[^}]*\} 1/,
      );
      expect(broken.logs.text()).toContain("rate-limit store unavailable");
      const ready = await broken.call("GET", "/readyz");
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({
        status: "unavailable",
        checks: { redis: false, credential: true, device_registry: true, campaign: true },
      });
    } finally {
      await broken.close();
      dead.disconnect();
    }
  });
});
