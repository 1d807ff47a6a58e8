import { httpsUrl, int, readEnv, type EnvVar } from "@herald/runtime";
import { senderEnv, type SenderConfig } from "@herald/sender";

/**
 * APNS_URL points both environments at one origin (a simulator, a proxy); unset, the
 * sender talks to Apple's production or sandbox host as each app's config says.
 */
const apnsUrl: EnvVar<string | undefined> = { ...httpsUrl("APNS_URL", "origin"), default: undefined };

export const configSpec = {
  ...senderEnv(7011),
  apnsUrl,
  /** Connections per (origin, team, key) at most; more open only while the others are full. */
  maxConnections: int("APNS_MAX_CONNECTIONS", 4, 1, 100),
  /** Sends waiting for a free stream per (origin, team, key); beyond that a send fails over to a retry. */
  maxQueued: int("APNS_MAX_QUEUED", 10_000, 1, 1_000_000),
  /** Age at which the provider JWT is re-signed: Apple wants 20 to 60 minutes. */
  tokenRefreshMinutes: int("APNS_TOKEN_REFRESH_MINUTES", 50, 20, 59),
  requestTimeoutMs: int("APNS_REQUEST_TIMEOUT_MS", 30_000, 100, 600_000),
  /** An idle connection is closed after this; Apple closes idle ones too (GOAWAY IdleTimeout). */
  idleTimeoutMs: int("APNS_IDLE_TIMEOUT_MS", 300_000, 1_000, 3_600_000),
};

export interface Config extends SenderConfig {
  apnsUrl: string | undefined;
  maxConnections: number;
  maxQueued: number;
  tokenRefreshMinutes: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => readEnv(configSpec, env);
