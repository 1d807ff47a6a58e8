import { bool, commonEnv, type EnvVar, int, masterKeyEnv, port } from "@herald/runtime";
import { str } from "@herald/runtime";

/** Retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (Standard Webhooks' schedule). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** Comma-separated delays in ms, one per retry. */
const schedule = (name: string): EnvVar<number[]> => ({
  name,
  default: DEFAULT_RETRY_SCHEDULE_MS,
  parse: (raw) => {
    const delays = raw.split(",").map((s) => Number(s.trim()));
    if (delays.length === 0 || delays.some((d) => !Number.isInteger(d) || d < 0)) {
      throw new Error("must be comma-separated whole numbers of milliseconds");
    }
    return delays;
  },
});

export const configSpec = {
  ...commonEnv,
  ...masterKeyEnv,
  port: port("PORT", 7004),
  adminPort: port("ADMIN_PORT", 7104),
  schema: str("DB_SCHEMA", "webhooks"),
  /** Dev mode and tests: endpoints may be http and resolve to private addresses. */
  allowPrivate: bool("HERALD_WEBHOOK_ALLOW_PRIVATE", false),
  retryScheduleMs: schedule("HERALD_WEBHOOK_RETRY_SCHEDULE_MS"),
  /** How long one POST may take. */
  timeoutMs: int("HERALD_WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
  /** POSTs in flight at once per replica. */
  concurrency: int("HERALD_WEBHOOK_CONCURRENCY", 32, 1, 1_000),
  /** How often the delivery loop looks for due deliveries when idle. */
  pollMs: int("HERALD_WEBHOOK_POLL_MS", 1_000, 10, 60_000),
  /** An endpoint whose attempts all failed for this long, counted from the first failure since its last success, is disabled. */
  disableAfterMs: int("HERALD_WEBHOOK_DISABLE_AFTER_MS", 5 * 24 * 3600 * 1000, 1_000),
};

type ParsedConfig = {
  [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never;
};
/** Settings that start() defaults, so that a config built by hand (tests) may leave them out. */
type Defaulted = "masterKeyVersion" | "previousMasterKeys";
export type Config = Omit<ParsedConfig, Defaulted> & Partial<Pick<ParsedConfig, Defaulted>>;
