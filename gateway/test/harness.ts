import { randomBytes, randomUUID } from "node:crypto";
import { createLogger, readEnv } from "@herald/runtime";
import type { FastifyInstance, InjectOptions } from "fastify";
import { Redis } from "ioredis";
import { expect, inject } from "vitest";
import { configSpec as campaignConfigSpec } from "../../services/campaign/src/config.js";
import { start as startCampaign } from "../../services/campaign/src/server.js";
import { start as startCredential } from "../../services/credential/src/server.js";
import { configSpec as deviceConfigSpec } from "../../services/device-registry/src/config.js";
import { start as startDeviceRegistry } from "../../services/device-registry/src/server.js";
import { configSpec as webhooksConfigSpec } from "../../services/webhooks/src/config.js";
import { start as startWebhooks } from "../../services/webhooks/src/server.js";
import { dropServiceData, serviceTestEnv } from "../../test/support/service-env.js";
import { uniqueName } from "../../test/support/unique.js";
import { build, type AppConfig } from "../src/app.js";
import { connectBackends } from "../src/backends.js";
import { LogCapture } from "../../test/support/log-capture.js";
import { suiteFixture } from "../../test/support/suite-fixture.js";
import { waitForValue } from "../../test/support/wait.js";

export interface Backends {
  credentialUrl: string;
  deviceRegistryUrl: string;
  campaignUrl: string;
  webhooksUrl: string;
  redisUrl: string;
  /** The org-scoped key the credential service ensured at start-up. */
  bootstrapKey: string;
  /** The credential service's schema (tests that need a second organization add it there). */
  credentialSchema: string;
  /** The services' NATS namespace (tests that play a sender on its delivery stream). */
  natsNamespace: string;
  stop(): Promise<void>;
}

/** The owner of the bootstrap organization that the credential service ensures at start-up. */
export interface BootstrapAdmin {
  email: string;
  password: string;
}

/**
 * The real credential, device-registry and campaign services, started in-process by
 * their own start(), on schemas and a NATS namespace of this test file alone. No sender
 * consumes the delivery stream: campaigns with devices stay "sending".
 */
export async function startBackends(opts: { bootstrapAdmin?: BootstrapAdmin } = {}): Promise<Backends> {
  const infra = inject("infra");
  const id = uniqueName("gw");
  const namespace = `${id}_ns`;
  const bootstrapKey = `hk_live_${randomBytes(24).toString("hex")}`;
  const log = createLogger("test-backend", process.env.TEST_LOG_LEVEL ?? "silent");
  const credential = await startCredential(
    {
      logLevel: "silent",
      databaseUrl: infra.databaseUrl,
      natsUrl: infra.natsUrl,
      natsNamespace: namespace,
      port: 0,
      adminPort: 0,
      schema: `${id}_cred`,
      masterKey: randomBytes(32),
      bootstrapApiKey: bootstrapKey,
      defaultRateLimit: 1000,
      ...(opts.bootstrapAdmin
        ? { bootstrapAdminEmail: opts.bootstrapAdmin.email, bootstrapAdminPassword: opts.bootstrapAdmin.password }
        : {}),
    },
    { log },
  );
  // What each service below reads from its environment: its own schema, the shared namespace.
  const env = (suffix: string, extra: Record<string, string>) =>
    serviceTestEnv(infra, { schema: `${id}_${suffix}`, namespace }, extra);
  const registry = await startDeviceRegistry(
    readEnv(deviceConfigSpec, env("dev", { HERALD_WEBPUSH_ALLOW_PRIVATE: "1" })),
    { log },
  );
  const campaign = await startCampaign(
    readEnv(
      campaignConfigSpec,
      env("cmp", { DEVICE_REGISTRY_URL: `http://127.0.0.1:${registry.port}`, SCHEDULER_INTERVAL_MS: "100" }),
    ),
    { log },
  );
  const webhooks = await startWebhooks(
    readEnv(
      webhooksConfigSpec,
      env("whk", {
        HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
        HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
        HERALD_WEBHOOK_POLL_MS: "100",
      }),
    ),
    { log },
  );
  return {
    credentialUrl: `http://127.0.0.1:${credential.port}`,
    deviceRegistryUrl: `http://127.0.0.1:${registry.port}`,
    campaignUrl: `http://127.0.0.1:${campaign.port}`,
    webhooksUrl: `http://127.0.0.1:${webhooks.port}`,
    redisUrl: infra.redisUrl,
    bootstrapKey,
    credentialSchema: `${id}_cred`,
    natsNamespace: namespace,
    stop: async () => {
      await webhooks.close();
      await campaign.close();
      await registry.close();
      await credential.close();
      await dropServiceData(infra, [`${id}_cred`, `${id}_dev`, `${id}_cmp`, `${id}_whk`], namespace);
    },
  };
}

export interface TestGateway {
  app: FastifyInstance;
  logs: LogCapture;
  redis: Redis;
  /** Sends a request with the given bearer token (none when undefined). */
  call(
    method: InjectOptions["method"],
    url: string,
    token?: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

export function gatewayConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    redisKeyPrefix: `${uniqueName("gwtest")}:`,
    rateLimitPerMinute: 1000,
    jwtIssuer: undefined,
    jwtJwksUrl: undefined,
    jwtAudience: undefined,
    corsOrigins: "*",
    bodyLimitBytes: 1024 * 1024,
    authCacheMs: 10_000,
    publicUrl: "http://127.0.0.1:8080",
    accessTokenTtlSeconds: 900,
    trustProxy: false,
    ...overrides,
  };
}

/**
 * The gateway's build() against the backends, with its own clients and Redis connection
 * (or the given one, which the caller then owns).
 */
export async function startGateway(
  backends: Backends,
  overrides: Partial<AppConfig> = {},
  opts: { redis?: Redis } = {},
): Promise<TestGateway> {
  const config = gatewayConfig(overrides);
  const clients = connectBackends(backends);
  const redis = opts.redis ?? new Redis(backends.redisUrl);
  const logs = new LogCapture();
  const app = await build({
    config,
    ...clients.clients,
    redis,
    log: createLogger("gateway", "debug", logs),
  });
  const call: TestGateway["call"] = async (method, url, token, body, headers = {}) => {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    let json: unknown;
    try {
      json = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: json, text: res.body };
  };
  return {
    app,
    logs,
    redis,
    call,
    close: async () => {
      await app.close();
      if (!opts.redis) {
        const keys = await redis.keys(`${config.redisKeyPrefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
      clients.close();
    },
  };
}

/** The backends and one gateway on them: what a gateway test file starts before its tests. */
export interface GatewayStack {
  backends: Backends;
  gw: TestGateway;
  /** The bootstrap organization's key (backends.bootstrapKey). */
  key: string;
  stop(): Promise<void>;
}

/**
 * startBackends() (with `opts`), then startGateway() with `overrides`; stops what started if
 * the gateway does not. Test files start it through useGatewayStack (or startOwnerStack).
 */
export async function startGatewayStack(
  overrides: Partial<AppConfig> = {},
  opts: { bootstrapAdmin?: BootstrapAdmin } = {},
): Promise<GatewayStack> {
  const backends = await startBackends(opts);
  let gw: TestGateway;
  try {
    gw = await startGateway(backends, overrides);
  } catch (err) {
    await backends.stop();
    throw err;
  }
  return {
    backends,
    gw,
    key: backends.bootstrapKey,
    stop: async () => {
      await gw.close();
      await backends.stop();
    },
  };
}

/** A test file's gateway (useGatewayStack): a TestGateway whose close() stops the whole stack. */
export interface FileGateway extends TestGateway {
  backends: Backends;
  /** The bootstrap organization's key (backends.bootstrapKey). */
  key: string;
}

/**
 * The one set-up of the gateway's test files: startGatewayStack(overrides, opts) before the
 * file's tests, stopped after them. The file's beforeAll hooks registered before this call run
 * before the start (`overrides` may be a function, read then), those registered after it
 * run after the start.
 */
export function useGatewayStack(
  overrides: Partial<AppConfig> | (() => Partial<AppConfig>) = {},
  opts: { bootstrapAdmin?: BootstrapAdmin } = {},
): FileGateway {
  return suiteFixture(
    async () => {
      const stack = await startGatewayStack(typeof overrides === "function" ? overrides() : overrides, opts);
      return { ...stack.gw, backends: stack.backends, key: stack.key, close: stack.stop };
    },
    (gw) => gw.close(),
  );
}

/** ISO 8601 UTC with milliseconds, the API's one timestamp format. */
export const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A JSON error answer of the API's shape (docs/design.md §3 Errors). */
export function expectError(res: Reply, status: number, name: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ error: name, message: expect.any(String) });
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
}

export interface CreatedApp {
  id: string;
  org_id: string;
  bundle_id: string;
}

/** A new app with a bundle id no other test uses. */
export async function createApp(gw: TestGateway, token: string, platform = "ios"): Promise<CreatedApp> {
  const res = await gw.call("POST", "/v1/apps", token, {
    name: "Example",
    platform,
    bundle_id: `com.example.${randomUUID().slice(0, 8)}`,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as CreatedApp;
}

/** The gateway's log has lines, and none names an Authorization header or holds any of `secrets`. */
export function expectLogFreeOf(gw: TestGateway, secrets: string[]): void {
  const logs = gw.logs.text();
  expect(logs.length).toBeGreaterThan(0);
  expect(logs).not.toMatch(/authorization/i);
  for (const secret of secrets) expect(logs.includes(secret), "a secret leaked into the log").toBe(false);
}

/** DELETE `url` answers 204 without a body; after it, GET and DELETE `url` answer 404. */
export async function expectDeleted(gw: TestGateway, token: string, url: string): Promise<void> {
  const del = await gw.call("DELETE", url, token);
  expect(del.status, del.text).toBe(204);
  expect(del.text).toBe("");
  expectError(await gw.call("GET", url, token), 404, "NotFound");
  expectError(await gw.call("DELETE", url, token), 404, "NotFound");
}

/** A browser's CORS preflight from https://admin.example.com for a POST to `url` that sends `requestHeaders`. */
export function preflight(gw: TestGateway, url: string, requestHeaders: string) {
  return gw.app.inject({
    method: "OPTIONS",
    url,
    headers: {
      origin: "https://admin.example.com",
      "access-control-request-method": "POST",
      "access-control-request-headers": requestHeaders,
    },
  });
}

/** Registers (or updates) a device of the app through the API; answers its id. */
export async function registerDevice(
  gw: TestGateway,
  token: string,
  appId: string,
  device: Record<string, unknown>,
): Promise<string> {
  const res = await gw.call("POST", "/v1/devices/register", token, { app_id: appId, ...device });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

/** A new API key scoped to the app; answers its secret. */
export async function appScopedKey(gw: TestGateway, token: string, appId: string): Promise<string> {
  const res = await gw.call("POST", `/v1/apps/${appId}/api-keys`, token, { name: "app", scope: "app" });
  expect(res.status, res.text).toBe(201);
  return res.body.secret as string;
}

/** Polls GET /v1/campaigns/{id} until `done` holds for the campaign; answers it. */
export function waitForCampaign(
  gw: TestGateway,
  token: string,
  id: string,
  done: (campaign: Reply["body"]) => boolean,
  what = `campaign ${id}`,
): Promise<Reply["body"]> {
  return waitForValue(
    what,
    async () => {
      const res = await gw.call("GET", `/v1/campaigns/${id}`, token);
      expect(res.status, res.text).toBe(200);
      return res.body;
    },
    done,
    { timeoutMs: 15_000, everyMs: 50, show: (c) => `status ${c.status}` },
  );
}
