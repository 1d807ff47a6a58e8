import type { Logger } from "@herald/runtime";
import { Http2Pool, startSender, type RunningSender } from "@herald/sender";
import { apnsMetrics } from "./apns-metrics.js";
import { DEFAULT_ALERT_OPTIONS } from "./apns-payload.js";
import { ApnsProvider, tokenAccepted } from "./apns-provider.js";
import type { Config } from "./config.js";
import { ProviderTokens } from "./provider-token.js";

export function start(config: Config, deps: { log: Logger }): Promise<RunningSender> {
  const pool = new Http2Pool({
    label: "APNs",
    maxConnections: config.maxConnections,
    maxQueued: config.maxQueued,
    requestTimeoutMs: config.requestTimeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    pingIntervalMs: config.pingIntervalMs,
    // One stream per connection until APNs has accepted its provider token.
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
    alert: DEFAULT_ALERT_OPTIONS,
    registerMetrics: metrics.register,
  });
  // The pool's connections size the sends in flight: their streams, not a constant.
  return startSender(config, provider, { ...deps, capacity: pool });
}
