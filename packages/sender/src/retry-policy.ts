import { equalJitter } from "@herald/runtime";

/**
 * When to try a failed send again: exponential backoff with equal jitter (a random wait
 * from half of min(maxDelayMs, baseDelayMs × 2^(attempt − 1)) to all of it; why not full
 * jitter: packages/runtime/src/backoff.ts), never sooner than the provider's Retry-After,
 * within a bounded number of attempts and time.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Give up once the next wait would end later than this after the first attempt. */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxElapsedMs: 120_000,
};

/**
 * The wait before attempt `attempt + 1` (attempts count from 1), or undefined when the
 * policy says stop.
 * `random` returns [0, 1), injected for deterministic tests.
 */
export function nextDelay(
  policy: RetryPolicy,
  attempt: number,
  elapsedMs: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  const jittered = equalJitter({ baseMs: policy.baseDelayMs, capMs: policy.maxDelayMs }, attempt - 1, random);
  const delay = Math.max(jittered, retryAfterMs ?? 0);
  if (elapsedMs + delay > policy.maxElapsedMs) return undefined;
  return delay;
}

/** Parses an HTTP Retry-After value (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | undefined | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
