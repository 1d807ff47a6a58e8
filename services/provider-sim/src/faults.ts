import { InputError } from "./errors.js";
import type { Platform } from "./platform.js";

/**
 * Faults a test or benchmark switches on through the admin API, per platform. Every
 * request draws its decision from a seeded PRNG (one stream per platform), so a run
 * with the same seed and the same request order faults the same requests.
 */
export interface FaultConfig {
  /** Share of requests answered with `error_status` (0..1). */
  error_rate: number;
  error_status: number;
  /** Share of requests answered 429 with `Retry-After: retry_after_s` (0..1). */
  throttle_rate: number;
  retry_after_s: number;
  /** Delay added before any request is handled, faulted or not. */
  latency_ms: number;
  /** Share of requests whose connection (HTTP/1.1) or stream (HTTP/2) is cut without an answer. */
  drop_rate: number;
  /** Share of answered HTTP/2 requests after which the connection gets GOAWAY (HTTP/1.1: `Connection: close`). */
  goaway_rate: number;
  /** Every request is answered 503 (APNs: `Shutdown`), then the connection gets GOAWAY. */
  shutdown: boolean;
  /** Apply to the next N requests only, then switch off; absent: until cleared. */
  remaining?: number;
}

/** What the admin API accepts: any subset of the fields, plus an optional PRNG re-seed. */
export type FaultInput = Partial<FaultConfig> & { seed?: number };

export type FaultAction =
  | { kind: "none" }
  | { kind: "drop" }
  | { kind: "error"; status: number }
  | { kind: "throttle"; retryAfterS: number }
  | { kind: "shutdown" };

/** The faults that are answered (not dropped): each provider words them its own way. */
export type AnsweredFault = Extract<FaultAction, { kind: "error" | "throttle" | "shutdown" }>;

export interface FaultDecision {
  latencyMs: number;
  action: FaultAction;
  /** Send GOAWAY once the request is answered. */
  goaway: boolean;
}

const RATE_FIELDS = ["error_rate", "throttle_rate", "drop_rate", "goaway_rate"] as const;
const KNOWN_FIELDS = new Set<string>([
  ...RATE_FIELDS,
  "shutdown",
  "error_status",
  "retry_after_s",
  "latency_ms",
  "remaining",
  "seed",
]);

/** Validates an admin request body; unknown fields are refused so a typo never silently does nothing. */
export function parseFaultInput(body: unknown): FaultInput {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new InputError("body must be a JSON object");
  const input = body as Record<string, unknown>;
  for (const key of Object.keys(input)) if (!KNOWN_FIELDS.has(key)) throw new InputError(`unknown field "${key}"`);
  const out: FaultInput = {};
  for (const field of RATE_FIELDS) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) throw new InputError(`${field} must be a number from 0 to 1`);
    out[field] = v;
  }
  if (input.shutdown !== undefined) {
    if (typeof input.shutdown !== "boolean") throw new InputError("shutdown must be true or false");
    out.shutdown = input.shutdown;
  }
  const ints: [Exclude<keyof FaultInput, (typeof RATE_FIELDS)[number] | "shutdown">, number, number][] = [
    ["error_status", 400, 599],
    ["retry_after_s", 0, 86_400],
    ["latency_ms", 0, 120_000],
    ["remaining", 1, Number.MAX_SAFE_INTEGER],
    ["seed", 0, 0xffff_ffff],
  ];
  for (const [field, min, max] of ints) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
      throw new InputError(`${field} must be an integer from ${min} to ${max}`);
    }
    out[field] = v;
  }
  return out;
}

export class Faults {
  private readonly configs = new Map<Platform, FaultConfig>();
  private readonly prngs = new Map<Platform, () => number>();

  constructor(private readonly seed: number) {}

  set(platform: Platform, input: FaultInput): FaultConfig {
    const { seed, ...fields } = input;
    const config: FaultConfig = {
      error_rate: 0,
      error_status: 500,
      throttle_rate: 0,
      retry_after_s: 1,
      latency_ms: 0,
      drop_rate: 0,
      goaway_rate: 0,
      shutdown: false,
      ...fields,
    };
    this.configs.set(platform, config);
    if (seed !== undefined) this.prngs.set(platform, createPrng(seed));
    return config;
  }

  clear(platform: Platform): void {
    this.configs.delete(platform);
  }

  get(platform: Platform): FaultConfig | undefined {
    return this.configs.get(platform);
  }

  /**
   * The fault for one request. Three draws every time (drop, error, throttle, in that
   * order of precedence), so one request's outcome never shifts the stream for the next;
   * a fourth for GOAWAY only when `goaway_rate` is set, so configurations without it
   * fault exactly the requests they did before it existed. `shutdown` overrides all.
   */
  decide(platform: Platform): FaultDecision {
    const config = this.configs.get(platform);
    if (!config) return { latencyMs: 0, action: { kind: "none" }, goaway: false };
    if (config.remaining !== undefined) {
      config.remaining -= 1;
      if (config.remaining <= 0) this.configs.delete(platform);
    }
    const next = this.prng(platform);
    const drop = next() < config.drop_rate;
    const error = next() < config.error_rate;
    const throttle = next() < config.throttle_rate;
    const goaway = config.goaway_rate > 0 && next() < config.goaway_rate;
    if (config.shutdown) return { latencyMs: config.latency_ms, action: { kind: "shutdown" }, goaway: true };
    const action: FaultAction = drop
      ? { kind: "drop" }
      : error
        ? { kind: "error", status: config.error_status }
        : throttle
          ? { kind: "throttle", retryAfterS: config.retry_after_s }
          : { kind: "none" };
    return { latencyMs: config.latency_ms, action, goaway };
  }

  private prng(platform: Platform): () => number {
    let prng = this.prngs.get(platform);
    if (!prng) this.prngs.set(platform, (prng = createPrng(this.seed ^ hash(platform))));
    return prng;
  }
}

/** mulberry32: small, fast, and good enough to spread faults evenly; not for secrets. */
export function createPrng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
