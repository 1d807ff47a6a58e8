import { type Logger, sleep } from "@herald/runtime";
import { nextDelay, type RetryPolicy } from "./retry-policy.js";

/**
 * Repeats a JetStream publish whose ack did not come until the stream has the message:
 * NATS stalled or restarting, or a stream leader being elected. Every repeat carries the
 * same Nats-Msg-Id, so the stream's duplicate window (15 min for outcomes, 2 min for
 * events) keeps one copy whichever attempt got through. A sender stores a batch's
 * outcomes this way before it acks the batch: giving up instead hands the batch back and
 * sends every notification in it again, though the providers already have them (the
 * chaos suite's 6 s NATS freeze did that to every batch in flight before).
 *
 * Gives up (throws the last error) once the next attempt would start more than
 * `policy.maxElapsedMs` after the first, or when `signal` aborts.
 */
export async function publishUntilStored<T>(
  publish: () => Promise<T>,
  opts: { policy: RetryPolicy; signal: AbortSignal; log: Logger; what: string },
): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await publish();
    } catch (err) {
      const delay = nextDelay(opts.policy, attempt, Date.now() - started, undefined);
      if (delay === undefined || opts.signal.aborted) throw err;
      opts.log.warn({ err, attempt, retryInMs: delay }, `${opts.what} not stored; publishing it again`);
      try {
        await sleep(delay, opts.signal);
      } catch {
        throw err;
      }
    }
  }
}

/** Store retries for a batch's outcomes: quick at first, every 2 s at most, for as long as the batch's ack wait. */
export const storePolicy = (ackWaitMs: number): RetryPolicy => ({
  maxAttempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 250,
  maxDelayMs: 2_000,
  maxElapsedMs: ackWaitMs,
});
