import { create, toBinary } from "@bufbuild/protobuf";
import { WebhookEventSchema } from "@herald/proto/webhook";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { type OutboxEvent, type OutboxKind, publishInTrace } from "./outbox.js";
import type { StreamNames } from "./streams.js";
import { toTimestamp } from "./time.js";
import { context } from "./tracing.js";

/** The event types an endpoint may subscribe to (the REST schema lists the same). */
export const WEBHOOK_EVENT_TYPES = [
  "campaign.started",
  "campaign.completed",
  "campaign.cancelled",
  "device.invalidated",
  "device.opted_out",
  "device.opted_in",
  "deliveries.failed",
  "deliveries.bounced",
  "user.erased",
  "webhook.test",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (t: string): t is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

/** Event ids: the JetStream dedup id and the webhook-id header. */
export const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Per-device results in one deliveries.* event at the most. */
export const MAX_DELIVERIES_PER_EVENT = 1_000;

export interface WebhookEventInput {
  /**
   * Unique and deterministic for what happened (`<type>.<what>`), so that announcing the
   * same thing again — a redelivered message, a retried transaction — is dropped by the
   * stream's de-duplication and by the dispatcher's event table: the dedup id and the
   * webhook-id header.
   */
  id: string;
  type: WebhookEventType;
  appId: string;
  timestamp: Date;
  data: Record<string, unknown>;
  /** Only this endpoint (webhook.test); otherwise every endpoint of the app subscribed to the type. */
  endpointId?: string;
}

function encode(e: WebhookEventInput): Uint8Array {
  return toBinary(
    WebhookEventSchema,
    create(WebhookEventSchema, {
      id: e.id,
      type: e.type,
      appId: e.appId,
      timestamp: toTimestamp(e.timestamp),
      dataJson: JSON.stringify(e.data),
      endpointId: e.endpointId,
    }),
  );
}

/**
 * Publishes a webhook event at once, in the active trace (its context in the message's
 * headers, as the outbox relay does for a row); JetStream drops a second publish of the
 * same id (the ack says `duplicate`).
 */
export function publishWebhookEvent(nc: NatsConnection, names: StreamNames, e: WebhookEventInput) {
  return publishInTrace(jetstream(nc), WEBHOOK_OUTBOX_KIND, names.webhookEvents, encode(e), e.id, context.active());
}

/** The outbox kind of webhook events (OutboxRelay's `kinds`). */
export const WEBHOOK_OUTBOX_KIND = "webhook";

export function webhookOutboxKind(names: StreamNames): OutboxKind {
  return {
    subject: names.webhookEvents,
    encode: (payload) => {
      const p = payload as {
        id: string;
        type: WebhookEventType;
        app_id: string;
        timestamp: string;
        data: Record<string, unknown>;
      };
      return encode({ id: p.id, type: p.type, appId: p.app_id, timestamp: new Date(p.timestamp), data: p.data });
    },
  };
}

/**
 * A webhook event as an outbox row, written in the transaction of what it announces; in
 * the active trace unless `traceContext` names the one it belongs to (OutboxEvent).
 */
export function webhookOutboxEvent(
  e: Omit<WebhookEventInput, "endpointId"> & { traceContext?: string | null },
): OutboxEvent {
  return {
    kind: WEBHOOK_OUTBOX_KIND,
    msgId: e.id,
    payload: { id: e.id, type: e.type, app_id: e.appId, timestamp: e.timestamp.toISOString(), data: e.data },
    ...(e.traceContext ? { traceContext: e.traceContext } : {}),
  };
}
