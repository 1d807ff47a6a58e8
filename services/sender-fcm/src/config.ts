import { httpsUrl, int, readEnv, str, url, type EnvVar } from "@herald/runtime";
import { senderEnv, type SenderConfig } from "@herald/sender";

export const configSpec = {
  ...senderEnv(7012),
  fcmUrl: { ...httpsUrl("FCM_URL", "base"), default: "https://fcm.googleapis.com" },
  /**
   * Sends every OAuth token request here instead of the service account's token_uri.
   * Dev mode points it at the provider simulator; in production leave it unset.
   */
  tokenUrlOverride: { ...httpsUrl("FCM_TOKEN_URL", "base"), default: undefined } as EnvVar<string | undefined>,
  /** Sends per minute per app across all replicas; FCM's default project quota. */
  rateLimitPerMinute: int("FCM_RATE_LIMIT_PER_MINUTE", 600_000, 1, 100_000_000),
  /** Budget window; the per-minute ceiling is scaled to it (shorter smooths bursts). */
  rateWindowMs: int("FCM_RATE_WINDOW_MS", 60_000, 100, 60_000),
  /** HTTP/2 connections to FCM at most; more open only while the others' streams are all in use. */
  maxConnections: int("FCM_MAX_CONNECTIONS", 16, 1, 100),
  redisUrl: url("REDIS_URL", "redis://127.0.0.1:6379"),
  redisKeyPrefix: str("REDIS_KEY_PREFIX", "herald:"),
};

export interface Config extends SenderConfig {
  fcmUrl: string;
  tokenUrlOverride: string | undefined;
  rateLimitPerMinute: number;
  rateWindowMs: number;
  maxConnections: number;
  redisUrl: string;
  redisKeyPrefix: string;
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => readEnv(configSpec, env);
