import { fromBinary } from "@bufbuild/protobuf";
import { WebhookEventSchema } from "@herald/proto/webhook";
import type { JsMsg } from "@nats-io/jetstream";
import {
  ATTR,
  context,
  contextFromHeaders,
  currentTraceContext,
  ensureStream,
  EVENT_ID,
  failSpan,
  isWebhookEventType,
  fromTimestamp,
  inSpan,
  isUuid,
  linkFromHeaders,
  type Logger,
  type NatsConnection,
  type PullConsumer,
  ROOT_CONTEXT,
  SpanKind,
  startPullConsumer,
  type StreamNames,
  webhooksStreamConfig,
} from "@herald/runtime";

import type { WebhookMetrics } from "./metrics.js";
import type { PgWebhookStore, StoredEvent } from "./webhook-store.js";

export const WEBHOOK_EVENTS_DURABLE = "webhooks-dispatcher";
const RETRY_DELAY_MS = 5_000;

/**
 * Records every webhook event and its deliveries in PostgreSQL, in one transaction, and
 * only then acks: a kill -9 at any point loses no event (an unacked one comes back, and a
 * recorded one is not recorded twice).
 *
 * Each message is recorded in a consumer span of its own trace, linked to the trace its
 * headers carry (the producer's: the change the event announces); the event keeps that
 * context, and every attempt's span links to it too (delivery-loop.ts).
 */
export async function startEventConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: PgWebhookStore;
  metrics: WebhookMetrics;
  log: Logger;
  /** Called after deliveries were recorded, so the delivery loop looks at once. */
  onRecorded: () => void;
}): Promise<PullConsumer> {
  const { nc, names, store, metrics, log } = opts;
  await ensureStream(nc, webhooksStreamConfig(names), log);
  return startPullConsumer(
    nc,
    {
      stream: names.webhooksStream,
      durable: names.consumer(WEBHOOK_EVENTS_DURABLE),
      filterSubject: names.webhookEvents,
      ackWaitMs: 30_000,
    },
    {
      log,
      concurrency: 4,
      fetchExpiresMs: 1_000,
      handle: (m) => {
        const link = linkFromHeaders(m.headers);
        return inSpan(
          "record webhook event",
          {
            kind: SpanKind.CONSUMER,
            parent: ROOT_CONTEXT,
            links: link ? [link] : [],
            attributes: { "messaging.system": "nats", "messaging.destination.name": m.subject },
          },
          async (span) => {
            const event = decode(m, log);
            if (!event) {
              metrics.events.inc({ result: "dropped" });
              span.setAttribute("herald.webhook.result", "dropped");
              return;
            }
            span.setAttributes({
              "herald.webhook.event_id": event.id,
              "herald.webhook.event_type": event.type,
              [ATTR.appId]: event.appId,
            });
            // The producer's context as it came (the link's), kept in the same form as an outbox row's.
            const traceContext = link ? context.with(contextFromHeaders(m.headers), currentTraceContext) : undefined;
            try {
              const { inserted, deliveries } = await store.recordEvent({ ...event, traceContext });
              m.ack();
              const result = inserted ? "recorded" : "duplicate";
              metrics.events.inc({ result });
              span.setAttribute("herald.webhook.result", result);
              if (deliveries > 0) opts.onRecorded();
            } catch (err) {
              log.error({ err, eventId: event.id }, "recording a webhook event failed; will retry");
              failSpan(span, err);
              m.nak(RETRY_DELAY_MS);
            }
          },
        );
      },
    },
  );
}

function decode(m: JsMsg, log: Logger): StoredEvent | undefined {
  let problem: string;
  try {
    const e = fromBinary(WebhookEventSchema, m.data);
    let data: unknown;
    try {
      data = JSON.parse(e.dataJson || "{}");
    } catch {
      data = undefined;
    }
    if (!EVENT_ID.test(e.id)) problem = "bad event id";
    else if (!isWebhookEventType(e.type)) problem = "unknown event type";
    else if (!isUuid(e.appId)) problem = "bad app id";
    else if (!e.timestamp) problem = "no timestamp";
    else if (typeof data !== "object" || data === null || Array.isArray(data)) problem = "data is not a JSON object";
    else if (e.endpointId !== undefined && !isUuid(e.endpointId)) problem = "bad endpoint id";
    else {
      return {
        id: e.id,
        type: e.type,
        appId: e.appId,
        occurredAt: fromTimestamp(e.timestamp),
        data: JSON.stringify(data),
        endpointId: e.endpointId,
      };
    }
  } catch {
    problem = "not a WebhookEvent protobuf";
  }
  log.warn({ subject: m.subject, seq: m.seq, problem }, "unusable webhook event; dropped");
  m.term();
  return undefined;
}
