import https from "node:https";
import { redisReady, type Logger } from "@herald/runtime";
import { Http2Pool, startSender, type RunningSender } from "@herald/sender";
import { Redis } from "ioredis";
import type { Config } from "./config.js";
import { FcmProvider } from "./fcm-provider.js";
import { OAuthTokenSource } from "./oauth-token.js";
import { RateCeiling } from "./rate-ceiling.js";
import { RedisBudgetStore } from "./redis-budget.js";
import { httpsTokenEndpoint } from "./token-endpoint.js";

const FCM_REQUEST_TIMEOUT_MS = 30_000;
const FCM_IDLE_TIMEOUT_MS = 60_000;

export async function start(config: Config, deps: { log: Logger }): Promise<RunningSender> {
  const { log } = deps;
  // Commands fail fast while Redis is away (no offline queue): the rate ceiling then
  // falls back to a per-replica count at once instead of holding sends until a reconnect.
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
  });
  redis.on("error", (err: Error) => log.debug({ err: err.message }, "redis connection error"));
  await redis.connect().catch((err: Error) => {
    log.warn({ err: err.message }, "redis unreachable at start-up; the rate ceiling is per replica until it answers");
  });
  const tokenAgent = new https.Agent({ keepAlive: true, maxSockets: 8 });
  const pool = new Http2Pool({
    label: "FCM",
    // Each carries what FCM's SETTINGS allow (100 or more streams).
    maxConnections: config.maxConnections,
    maxQueued: 10_000,
    requestTimeoutMs: FCM_REQUEST_TIMEOUT_MS,
    connectTimeoutMs: config.connectTimeoutMs,
    idleTimeoutMs: FCM_IDLE_TIMEOUT_MS,
    pingIntervalMs: config.pingIntervalMs,
    log,
  });
  const provider = new FcmProvider({
    fcmUrl: config.fcmUrl,
    tokenUrlOverride: config.tokenUrlOverride,
    transport: pool,
    tokens: new OAuthTokenSource(httpsTokenEndpoint(tokenAgent)),
    ceiling: new RateCeiling({
      perMinute: config.rateLimitPerMinute,
      windowMs: config.rateWindowMs,
      store: new RedisBudgetStore(redis, config.redisKeyPrefix),
      log,
    }),
    log,
  });
  const release = () => {
    tokenAgent.destroy();
    redis.disconnect();
  };
  let sender: RunningSender;
  try {
    // The pool's connections size the sends in flight: their streams, not a constant.
    sender = await startSender(config, provider, { ...deps, ready: redisReady(redis), capacity: pool });
  } catch (err) {
    await provider.close();
    release();
    throw err;
  }
  return {
    adminPort: sender.adminPort,
    async close() {
      await sender.close();
      release();
    },
  };
}
