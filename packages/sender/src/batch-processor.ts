import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  DeviceInvalidatedSchema,
  OutcomeKind,
  OutcomeSchema,
  type DeliveryBatch,
  type DeliveryTarget,
  type DeviceInvalidated,
  type Outcome,
  type RenderedPayload,
} from "@herald/proto/delivery";
import { ATTR, context, SpanKind, SpanStatusCode, sleep, trace, tracer } from "@herald/runtime";
import type { CredentialsCache } from "./credentials-cache.js";
import type { Limiter } from "./limiter.js";
import type { Provider, SendContext, SendResult } from "./provider.js";
import { nextDelay, type RetryPolicy } from "./retry-policy.js";

export interface BatchResult {
  outcomes: Outcome[];
  invalidations: DeviceInvalidated[];
}

interface Delivered {
  outcome: Outcome;
  invalidation?: DeviceInvalidated;
}

export interface BatchProcessorDeps<C> {
  provider: Provider<C>;
  credentials: CredentialsCache<C>;
  policy: RetryPolicy;
  /** Bounds concurrent sends across every batch of the process. */
  sendLimiter: Limiter;
  /** Each attempt's result, duration and HTTP status (undefined when no answer came). */
  onResult?: (result: SendResult, elapsedMs: number, status: number | undefined) => void;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

/**
 * Sends every target of one delivery batch and returns exactly one outcome per target.
 * Transient failures are retried per device with backoff; when retries run out the
 * device is `throttled` (the provider kept rate-limiting) or `failed`. It throws only
 * when the credential service is unreachable or `signal` aborts: then the caller
 * returns the whole batch to the queue.
 */
export class BatchProcessor<C> {
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly deps: BatchProcessorDeps<C>) {
    this.sleep = deps.sleep ?? sleep;
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
  }

  async process(batch: DeliveryBatch, signal: AbortSignal): Promise<BatchResult> {
    const payloads = new Map(batch.payloads.map((p) => [p.index, p]));
    const permanent = await this.permanentFailure(batch);
    if (permanent) {
      return {
        outcomes: batch.targets.map((t) => outcome(t.deviceId, OutcomeKind.FAILED, permanent, 0)),
        invalidations: [],
      };
    }
    const creds = await this.deps.credentials.get(batch.appId);
    if (!creds.ok) {
      return {
        outcomes: batch.targets.map((t) => outcome(t.deviceId, OutcomeKind.FAILED, creds.reason, 0)),
        invalidations: [],
      };
    }
    // A device's send chain starts only once it holds a send slot: the process keeps about
    // maxInFlight chains alive, not one per device of every batch it holds (8 × 500), so
    // few objects outlive a young-generation collection.
    const { sendLimiter } = this.deps;
    const results: Promise<Delivered>[] = [];
    for (const target of batch.targets) {
      const payload = payloads.get(target.payloadIndex);
      if (!payload) {
        results.push(Promise.resolve({ outcome: outcome(target.deviceId, OutcomeKind.FAILED, "MissingPayload", 0) }));
        continue;
      }
      if (!sendLimiter.tryAcquire()) await sendLimiter.acquire();
      if (signal.aborted) {
        sendLimiter.release();
        break;
      }
      const delivered = this.deliver(batch, target, payload, creds.credentials, signal);
      // Seen by Promise.all below; until then an abort's rejection must not count as unhandled.
      delivered.catch(ignore);
      results.push(delivered);
    }
    const settled = await Promise.all(results);
    signal.throwIfAborted();
    return {
      outcomes: settled.map((r) => r.outcome),
      invalidations: settled.flatMap((r) => (r.invalidation ? [r.invalidation] : [])),
    };
  }

  private async permanentFailure(batch: DeliveryBatch): Promise<string | undefined> {
    if (batch.ttlSeconds > 0 && batch.createdAt) {
      const deadline = timestampDate(batch.createdAt).getTime() + batch.ttlSeconds * 1000;
      if (this.now() > deadline) return "Expired";
    }
    return undefined;
  }

  private async deliver(
    batch: DeliveryBatch,
    target: DeliveryTarget,
    payload: RenderedPayload,
    credentials: C,
    signal: AbortSignal,
  ): Promise<Delivered> {
    const started = this.now();
    for (let attempt = 1; ; attempt++) {
      // The first attempt runs on the slot process() took for it; a retry takes a new one.
      if (attempt > 1) {
        if (!this.deps.sendLimiter.tryAcquire()) await this.deps.sendLimiter.acquire();
      }
      if (signal.aborted) {
        this.deps.sendLimiter.release();
        signal.throwIfAborted();
      }
      const result = await this.attempt(batch, target, payload, credentials, signal, attempt);
      switch (result.kind) {
        case "delivered":
          return { outcome: outcome(target.deviceId, OutcomeKind.DELIVERED, "", attempt) };
        case "failed":
          return { outcome: outcome(target.deviceId, OutcomeKind.FAILED, result.reason, attempt) };
        case "bounced":
          return {
            outcome: outcome(target.deviceId, OutcomeKind.BOUNCED, result.reason, attempt),
            invalidation: create(DeviceInvalidatedSchema, {
              deviceId: target.deviceId,
              appId: batch.appId,
              platform: batch.platform,
              reason: reasonText(result.reason),
              observedAt: timestampFromDate(result.observedAt ?? new Date(this.now())),
            }),
          };
        case "retry": {
          const delay = nextDelay(this.deps.policy, attempt, this.now() - started, result.retryAfterMs, this.random);
          if (delay === undefined) {
            const kind = result.throttled ? OutcomeKind.THROTTLED : OutcomeKind.FAILED;
            return { outcome: outcome(target.deviceId, kind, result.reason, attempt) };
          }
          trace.getActiveSpan()?.addEvent("retry", { "herald.attempt": attempt, "herald.retry.delay_ms": delay });
          await this.sleep(delay, signal);
        }
      }
    }
  }

  private async attempt(
    batch: DeliveryBatch,
    target: DeliveryTarget,
    payload: RenderedPayload,
    credentials: C,
    signal: AbortSignal,
    attempt: number,
  ): Promise<SendResult> {
    // The caller holds a send slot; it is released here once the provider answered.
    const t0 = this.now();
    let result: SendResult;
    const sendCtx: SendContext<C> = { batch, payload, credentials, signal };
    // One client span per provider request; the provider adds the HTTP status to it.
    const span = tracer.startSpan(`${this.deps.provider.platform} send`, {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR.platform]: this.deps.provider.platform,
        [ATTR.campaignId]: batch.campaignId,
        [ATTR.appId]: batch.appId,
        "herald.attempt": attempt,
      },
    });
    try {
      // Without tracing the span records nothing: no context switch per notification.
      result = span.isRecording()
        ? await context.with(trace.setSpan(context.active(), span), () => this.deps.provider.send(target, sendCtx))
        : await this.deps.provider.send(target, sendCtx);
    } catch (err) {
      signal.throwIfAborted();
      // Network trouble (reset, timeout, refused): transient by nature.
      const code = (err as { code?: string }).code ?? (err as Error).name ?? "Error";
      result = { kind: "retry", reason: `NetworkError:${code}` };
    } finally {
      this.deps.sendLimiter.release();
    }
    span.setAttribute("herald.result", result.kind);
    if (result.kind !== "delivered") span.setAttribute("herald.reason", result.reason);
    if (result.kind !== "delivered" && result.kind !== "retry") span.setStatus({ code: SpanStatusCode.ERROR });
    if (result.kind === "retry" && result.retryAfterMs !== undefined)
      span.setAttribute("herald.retry_after_ms", result.retryAfterMs);
    span.end();
    this.deps.onResult?.(result, this.now() - t0, sendCtx.response?.status);
    return result;
  }
}

const ignore = (): void => undefined;

function outcome(deviceId: string, kind: OutcomeKind, reason: string, attempts: number): Outcome {
  return create(OutcomeSchema, { deviceId, kind, reason: reasonText(reason), attempts });
}

/** Most characters of a reason kept. */
const MAX_REASON_CHARS = 256;

/**
 * A reason as it leaves the sender. Reasons carry provider text (an FCM error message, a
 * token endpoint's error_description) into the campaign's outcomes table, where a NUL
 * would fail the whole batch's insert, and into logs: control characters become spaces
 * and it is cut short.
 */
function reasonText(reason: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
  return reason.replace(/[\u0000-\u001f\u007f]+/g, " ").slice(0, MAX_REASON_CHARS);
}
