import { create, toBinary } from "@bufbuild/protobuf";
import { WebhookEventSchema } from "@herald/proto/webhook";
import { jetstream } from "@nats-io/jetstream";
import { type NatsConnection, type StreamNames, toTimestamp } from "@herald/runtime";

export interface WebhookEventInput {
  /** Unique and deterministic for what happened: the dedup id and the webhook-id. */
  id: string;
  type: string;
  appId: string;
  timestamp: Date;
  data: Record<string, unknown>;
  endpointId?: string;
}

/** Publishes a webhook event; JetStream drops a second publish of the same id. */
export async function publishWebhookEvent(nc: NatsConnection, names: StreamNames, e: WebhookEventInput) {
  const msg = create(WebhookEventSchema, {
    id: e.id,
    type: e.type,
    appId: e.appId,
    timestamp: toTimestamp(e.timestamp),
    dataJson: JSON.stringify(e.data),
    endpointId: e.endpointId,
  });
  // The ack says `duplicate` when the stream already has this event id.
  return jetstream(nc).publish(names.webhookEvents, toBinary(WebhookEventSchema, msg), { msgID: e.id });
}
