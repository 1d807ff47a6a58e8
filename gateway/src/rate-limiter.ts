import { createHash } from "node:crypto";
import { Coalescer } from "@herald/runtime";
import type { Redis } from "ioredis";

/**
 * Fixed-window request counting in Redis. The window starts at an identity's first
 * request and lasts 60 s: INCR, PEXPIRE on the first hit, then PTTL, all in one Lua script
 * so that concurrent requests on any number of gateway replicas see exact, gap-free counts.
 * A key left without expiry (should never happen) gets one, so it cannot block forever.
 * The script counts a batch of hits (KEYS, in order, a key as often as it was hit): the
 * requests of one gateway that arrive together cost one round trip to Redis, not one each.
 */
const SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  if count == 1 then
    redis.call('PEXPIRE', key, ARGV[1])
  end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  out[2 * i - 1] = count
  out[2 * i] = ttl
end
return out
`;
const SCRIPT_SHA = createHash("sha1").update(SCRIPT).digest("hex");

export const WINDOW_MS = 60_000;
/** Hits per script call; calls in flight per gateway. */
const MAX_BATCH = 256;
const MAX_IN_FLIGHT = 2;

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends. */
  ttlMs: number;
}

export class RateLimiter {
  private readonly hits: Coalescer<string, WindowCount>;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly timeoutMs = 1_000,
    private readonly windowMs = WINDOW_MS,
  ) {
    this.hits = new Coalescer(
      async (keys) => {
        const flat = await this.withTimeout(this.run(keys));
        return keys.map((_, i) => ({ ok: true, value: { count: flat[2 * i]!, ttlMs: flat[2 * i + 1]! } }));
      },
      { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT },
    );
  }

  /** Counts one request of `identity`. Rejects when Redis fails or is slower than the timeout. */
  hit(identity: string): Promise<WindowCount> {
    return this.hits.submit(`${this.keyPrefix}ratelimit:${identity}`);
  }

  private async withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`rate-limit store did not answer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** EVALSHA, falling back to EVAL (which also caches the script) after a Redis restart or failover. */
  private async run(keys: string[]): Promise<number[]> {
    try {
      return (await this.redis.evalsha(SCRIPT_SHA, keys.length, ...keys, this.windowMs)) as number[];
    } catch (err) {
      if (!/NOSCRIPT/.test((err as Error).message)) throw err;
      return (await this.redis.eval(SCRIPT, keys.length, ...keys, this.windowMs)) as number[];
    }
  }
}

export interface RateLimitDecision {
  headers: {
    "x-ratelimit-limit": string;
    "x-ratelimit-remaining": string;
    "x-ratelimit-reset": string;
  };
  /** Set when the request is over the limit: seconds until the window ends, at least 1. */
  retryAfterSeconds?: number;
}

/** The headers of a counted request; `nowMs` is the gateway's clock. */
export function decide(limit: number, counted: WindowCount, nowMs: number): RateLimitDecision {
  const ttlMs = Math.max(0, counted.ttlMs);
  const decision: RateLimitDecision = {
    headers: {
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - counted.count)),
      "x-ratelimit-reset": String(Math.ceil((nowMs + ttlMs) / 1000)),
    },
  };
  if (counted.count > limit) decision.retryAfterSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return decision;
}

/** When the store is unreachable the request is let through uncounted: it shows a full window. */
export function uncounted(limit: number, nowMs: number, windowMs = WINDOW_MS): RateLimitDecision {
  return decide(limit, { count: 0, ttlMs: windowMs }, nowMs);
}
