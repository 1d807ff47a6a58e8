import {
  ATTR,
  inSpan,
  isUuid,
  type Logger,
  ROOT_CONTEXT,
  type SealedBox,
  SpanKind,
  sleep,
  trace,
  traceContextFrom,
} from "@herald/runtime";
import type { HttpSender } from "./http-sender.js";
import type { WebhookMetrics } from "./metrics.js";
import { webhookHeaders } from "./signature.js";
import { openSecret } from "./webhook-service.js";
import type { AttemptResult, DueDelivery, PgWebhookStore } from "./webhook-store.js";

export interface DeliveryLoopOptions {
  store: PgWebhookStore;
  sender: HttpSender;
  box: SealedBox;
  metrics: WebhookMetrics;
  log: Logger;
  concurrency: number;
  pollMs: number;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
}

/**
 * Leases due deliveries (FOR UPDATE SKIP LOCKED, at most as many as there are free slots)
 * and POSTs them with bounded concurrency. A lease outlasts the POST's timeout; a replica
 * killed mid-attempt leaves the row to be taken again when the lease runs out.
 */
export class DeliveryLoop {
  private inFlight = 0;
  private wake: (() => void) | undefined;
  private readonly stopping = new AbortController();
  private readonly running: Promise<void>;
  private readonly attempts = new Set<Promise<void>>();

  constructor(private readonly o: DeliveryLoopOptions) {
    this.running = this.loop();
  }

  /** Looks for due deliveries now (an event was just recorded). */
  poke(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake?.();
    await this.running;
    await Promise.all(this.attempts);
  }

  private async loop(): Promise<void> {
    const { store, log } = this.o;
    // Outlasts the POST and its bookkeeping; a killed replica's rows come back when it runs out.
    const leaseMs = 2 * this.o.timeoutMs + 5_000;
    while (!this.stopping.signal.aborted) {
      let claimed: DueDelivery[] = [];
      const free = this.o.concurrency - this.inFlight;
      if (free > 0) {
        try {
          claimed = await store.claimDue(free, leaseMs);
        } catch (err) {
          log.error({ err }, "claiming webhook deliveries failed");
        }
      }
      for (const d of claimed) {
        this.inFlight++;
        const p = this.attempt(d).finally(() => {
          this.inFlight--;
          this.attempts.delete(p);
          this.wake?.();
        });
        this.attempts.add(p);
      }
      // A full claim: there may be more due at once.
      if (claimed.length > 0 && claimed.length === free) continue;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        sleep(this.o.pollMs, this.stopping.signal).then(resolve, resolve);
      });
      this.wake = undefined;
    }
  }

  private async attempt(d: DueDelivery): Promise<void> {
    const { store, log, metrics } = this.o;
    try {
      if (!d.enabled) {
        await store.abandon(d, "endpoint disabled");
        return;
      }
      // A trace of its own (an attempt may come days after the event), linked to the event's.
      const result = await inSpan(
        "webhook.attempt",
        { kind: SpanKind.CLIENT, parent: ROOT_CONTEXT, links: eventLink(d), attributes: spanAttributes(d) },
        async (span) => {
          const r = await this.post(d);
          span.setAttribute("herald.webhook.outcome", r.outcome);
          if ("status" in r && r.status !== undefined) span.setAttribute("http.response.status_code", r.status);
          return r;
        },
      );
      const disabled = await store.finishAttempt(d, result, this.o.disableAfterMs);
      metrics.attempts.inc({
        outcome:
          result.outcome === "failed" && "disableReason" in result && result.disableReason ? "gone" : result.outcome,
      });
      if (disabled) {
        metrics.endpointsDisabled.inc({ cause: disabled.cause });
        log.warn({ endpointId: d.endpoint_id, appId: d.app_id, cause: disabled.cause }, "webhook endpoint disabled");
      }
      log.debug({ eventId: d.event_id, endpointId: d.endpoint_id, outcome: result.outcome }, "webhook attempt");
    } catch (err) {
      log.error({ err, eventId: d.event_id, endpointId: d.endpoint_id }, "webhook attempt failed to complete");
    }
  }

  private async post(d: DueDelivery): Promise<AttemptResult> {
    const { box, sender, metrics } = this.o;
    const secrets = [openSecret(box, d.endpoint_id, d.secret_sealed, d.secret_key_version)];
    if (
      d.previous_secret_sealed &&
      d.previous_secret_key_version !== null &&
      d.previous_secret_expires_at &&
      d.previous_secret_expires_at.getTime() > Date.now()
    ) {
      secrets.push(openSecret(box, d.endpoint_id, d.previous_secret_sealed, d.previous_secret_key_version));
    }
    const body = `{"type":${JSON.stringify(d.type)},"timestamp":${JSON.stringify(d.occurred_at.toISOString())},"data":${d.data}}`;
    const now = Math.floor(Date.now() / 1000);
    const started = performance.now();
    const res = await sender.post(d.url, webhookHeaders(secrets, d.event_id, now, body), body);
    metrics.latency.observe((performance.now() - started) / 1000);
    const retries = this.o.retryScheduleMs;
    const retryOr = (error: string, status?: number, resBody?: string): AttemptResult =>
      d.attempts < retries.length
        ? { outcome: "retry", error, status, body: resBody, nextInMs: retries[d.attempts]! }
        : { outcome: "failed", error, status, body: resBody };
    if (!res.ok) return retryOr(res.error);
    if (res.status >= 200 && res.status < 300) return { outcome: "delivered", status: res.status, body: res.body };
    if (res.status === 410) {
      return {
        outcome: "failed",
        error: "HTTP 410",
        status: 410,
        body: res.body,
        disableReason: "the endpoint answered 410 Gone",
      };
    }
    return retryOr(`HTTP ${res.status}`, res.status, res.body);
  }
}

/** A link to the trace of the event's producer, when its message carried one. */
export function eventLink(d: Pick<DueDelivery, "trace_context">) {
  const event = trace.getSpanContext(traceContextFrom(d.trace_context));
  return event && trace.isSpanContextValid(event) ? [{ context: event }] : [];
}

/** Events whose data names the campaign they are about. */
const CAMPAIGN_EVENT = /^(campaign|deliveries)\./;

/**
 * The attempt span's attributes: ids only (never the URL, which may carry a token, nor the
 * secret), with the campaign of campaign.* and deliveries.* events.
 */
export function spanAttributes(d: Pick<DueDelivery, "event_id" | "endpoint_id" | "app_id" | "type" | "data">) {
  const attributes: Record<string, string> = {
    "herald.webhook.event_id": d.event_id,
    "herald.webhook.endpoint_id": d.endpoint_id,
    "herald.webhook.event_type": d.type,
    [ATTR.appId]: d.app_id,
  };
  if (CAMPAIGN_EVENT.test(d.type)) {
    const campaignId = campaignIdOf(d.data);
    if (campaignId) attributes[ATTR.campaignId] = campaignId;
  }
  return attributes;
}

function campaignIdOf(data: string): string | undefined {
  try {
    const id = (JSON.parse(data) as { campaign_id?: unknown } | null)?.campaign_id;
    return typeof id === "string" && isUuid(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
