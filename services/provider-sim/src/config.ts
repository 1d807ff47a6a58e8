import path from "node:path";
import { fileURLToPath } from "node:url";
import { bool, httpsUrl, int, logLevel, port, str, type EnvVar } from "@herald/runtime/service";

/** `<repo>/.herald/sim-ca`: the same place for dev mode, `npm test` and every process that trusts it. */
export const DEFAULT_CERT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../.herald/sim-ca");

/**
 * The origin endpoints are issued under, and the only VAPID `aud` the simulator accepts.
 * An origin, not a URL with a path: the push routes live at the root.
 */
const publicUrl: EnvVar<string | undefined> = { ...httpsUrl("SIM_PUBLIC_URL", "origin"), default: undefined };

/** Extra names for the server certificate (e.g. a Kubernetes service name), beside localhost and loopback. */
const certHosts: EnvVar<string[]> = {
  name: "SIM_CERT_HOSTS",
  default: [],
  parse: (s) =>
    s
      .split(",")
      .map((h) => h.trim())
      .filter((h) => h.length > 0),
};

/** Seed of the fault-decision PRNG; unset means a random seed (logged, so a run can be replayed). */
const seed: EnvVar<number | undefined> = { ...int("SIM_SEED", 0, 0, 0xffff_ffff), default: undefined };

export const certSpec = {
  certDir: str("SIM_CERT_DIR", DEFAULT_CERT_DIR),
  certHosts,
};

export const configSpec = {
  logLevel: logLevel(),
  port: port("PORT", 4443),
  adminPort: port("ADMIN_PORT", 4444),
  ...certSpec,
  publicUrl,
  seed,
  /** Deliveries kept for queries; counts stay exact beyond it. */
  maxRecorded: int("SIM_MAX_RECORDED", 200_000, 1, 10_000_000),
  /** SETTINGS_MAX_CONCURRENT_STREAMS once a connection may have more than one stream (APNs advertises 500). */
  apnsMaxStreams: int("SIM_APNS_MAX_STREAMS", 500, 1, 100_000),
  /** A connection may change its provider token at most once per this interval (Apple: 20 minutes). */
  apnsMinTokenIntervalMs: int("SIM_APNS_MIN_TOKEN_INTERVAL_MS", 20 * 60_000, 0, 24 * 3_600_000),
  /** Refuse well-formed device tokens the simulator never issued (BadDeviceToken) instead of accepting them. */
  apnsStrictTokens: bool("SIM_APNS_STRICT_TOKENS", false),
  /** Per-device token bucket behind 429 TooManyRequests: this many pushes at once… */
  apnsDeviceBurst: int("SIM_APNS_DEVICE_BURST", 100, 1, 1_000_000),
  /** …refilled at this many per second (0: never refilled). */
  apnsDeviceRatePerS: int("SIM_APNS_DEVICE_RATE_PER_S", 10, 0, 1_000_000),
  /** `expires_in` of issued OAuth access tokens (Google answers 3599). */
  fcmTokenTtlS: int("SIM_FCM_TOKEN_TTL_S", 3599, 1, 86_400),
  /** Refuse registration tokens the simulator never issued (INVALID_ARGUMENT) instead of accepting them. */
  fcmStrictTokens: bool("SIM_FCM_STRICT_TOKENS", false),
};

export type Config = { [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never };
