export interface Backoff {
  /** The ceiling of the first retry's wait, doubled with every further attempt. */
  baseMs: number;
  /** The ceiling never grows past this. */
  capMs: number;
}

/**
 * Exponential backoff with full jitter (docs/sdk-protocol.md §5): the wait after failed
 * attempt `attempt` (counted from 0) is a random whole number of ms in
 * [0, min(capMs, baseMs × 2^attempt)], so that callers failing together spread out.
 * `random` returns [0, 1), injected for deterministic tests.
 */
export function fullJitter(backoff: Backoff, attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * (ceilingOf(backoff, attempt) + 1));
}

/**
 * Exponential backoff with equal jitter: a random whole number of ms in
 * [ceiling / 2, ceiling]. Callers still spread out, and the waits keep at least half
 * their exponential length, so a bounded number of attempts always spans at least half
 * the schedule: the senders retry a provider's short outage (a few seconds of 503s)
 * without spending every attempt inside it, which full jitter's waits near 0 may do.
 */
export function equalJitter(backoff: Backoff, attempt: number, random: () => number = Math.random): number {
  const ceiling = ceilingOf(backoff, attempt);
  return Math.floor(ceiling / 2 + random() * (ceiling / 2));
}

function ceilingOf(backoff: Backoff, attempt: number): number {
  return Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.max(0, attempt));
}

/**
 * Resolves after ms; rejects with the signal's reason as soon as `signal` aborts (at once
 * when it already has), clearing the timer.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
