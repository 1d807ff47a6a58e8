import type { Logger } from "@herald/runtime";
import { startSender, type RunningSender } from "@herald/sender";
import { apnsMetrics } from "./apns-metrics.js";
import { ApnsProvider, tokenAccepted } from "./apns-provider.js";
import type { Config } from "./config.js";
import { ConnectionPool } from "./connection-pool.js";
import { ProviderTokens } from "./provider-token.js";

export function start(config: Config, deps: { log: Logger }): Promise<RunningSender> {
  const pool = new ConnectionPool({
    maxConnections: config.maxConnections,
    maxQueued: config.maxQueued,
    requestTimeoutMs: config.requestTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    accepted: tokenAccepted,
    log: deps.log,
  });
  const metrics = apnsMetrics(pool);
  const tokens = new ProviderTokens({
    refreshAfterMs: config.tokenRefreshMinutes * 60_000,
    onSign: metrics.tokenSigned,
  });
  const provider = new ApnsProvider({
    pool,
    tokens,
    baseUrl: config.apnsUrl,
    // The send API carries no sound: alerts play the default one, as users of other services expect.
    alert: { sound: "default" },
    registerMetrics: metrics.register,
  });
  return startSender(config, provider, deps);
}
