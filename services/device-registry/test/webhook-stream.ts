import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { WebhookEventSchema } from "@herald/proto/webhook";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { randomUUID } from "node:crypto";
import { waitForValue } from "../../../test/support/wait.js";
import { type Registry, registerDevice } from "./harness.js";

/** Where a registry's events are read: its NATS connection and namespace. */
type Streams = Pick<Registry, "nc" | "names">;

/** A webhook event as the registry published it to the WEBHOOKS stream. */
export interface StreamedEvent {
  /** The JetStream de-duplication id (Nats-Msg-Id). */
  msgId: string | undefined;
  id: string;
  type: string;
  appId: string;
  timestamp: Date;
  data: Record<string, unknown>;
}

/** Every webhook event in the namespace's WEBHOOKS stream, in stream order. */
export async function webhookEvents({ nc, names }: Streams): Promise<StreamedEvent[]> {
  const { state } = await (await jetstreamManager(nc)).streams.info(names.webhooksStream);
  if (state.messages === 0) return [];
  const consumer = await jetstream(nc).consumers.get(names.webhooksStream);
  const out: StreamedEvent[] = [];
  try {
    while (out.length < state.messages) {
      const m = await consumer.next({ expires: 2_000 });
      if (!m) throw new Error(`read ${out.length} of ${state.messages} webhook events`);
      const e = fromBinary(WebhookEventSchema, m.data);
      out.push({
        msgId: m.headers?.get("Nats-Msg-Id"),
        id: e.id,
        type: e.type,
        appId: e.appId,
        timestamp: timestampDate(e.timestamp!),
        data: JSON.parse(e.dataJson) as Record<string, unknown>,
      });
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return out;
}

/** The stream's events once `done` holds for them (the relay publishes asynchronously). */
export function waitForEvents(r: Streams, done: (events: StreamedEvent[]) => boolean): Promise<StreamedEvent[]> {
  return waitForValue("webhook events in the stream", () => webhookEvents(r), done, { timeoutMs: 15_000 });
}

/**
 * Makes a change that is announced (a new app's device opts out) and answers the stream's
 * events once its event is there. The relay publishes the outbox in order, so an event
 * that an earlier change had written would be in the stream by then: what is absent now is
 * absent for good.
 */
export async function afterSentinel(r: Registry): Promise<StreamedEvent[]> {
  const device = await registerDevice(r, randomUUID());
  await r.client.setOptIn({ id: device.id, optedIn: false });
  return waitForEvents(r, (es) => es.some((e) => e.data.device_id === device.id));
}
