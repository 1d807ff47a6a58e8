import {
  AckPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  type ConsumerMessages,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { ensureStream, eventsStreamConfig, type Logger, type NatsConnection, type StreamNames } from "@herald/runtime";

/** Delay before a message whose handling failed (database down) comes back. */
export const RETRY_DELAY_MS = 5_000;
const ACK_WAIT_NS = 60 * 1e9;

export interface EventsConsumer {
  close(): Promise<void>;
}

/**
 * A durable pull consumer of one subject of the events stream. Durable, so replicas
 * share the work and a message published while we were down is still handled; acks are
 * explicit and left to `process`, which reads the messages until close().
 */
export async function startEventsConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  log: Logger;
  /** Durable name before the namespace prefix, e.g. "device-registry-app-deleted". */
  durable: string;
  subject: string;
  /** Messages the client keeps pulled ahead of processing. */
  maxMessages: number;
  process(messages: ConsumerMessages): Promise<void>;
}): Promise<EventsConsumer> {
  const { nc, names, log } = opts;
  const jsm = await ensureStream(nc, eventsStreamConfig(names));
  const name = names.consumer(opts.durable);
  await ensureConsumer(jsm, names.eventsStream, name, opts.subject);
  const consumer = await jetstream(nc).consumers.get(names.eventsStream, name);
  const messages = await consumer.consume({ max_messages: opts.maxMessages });
  let closing = false;
  const loop = opts
    .process(messages)
    .then(() => {
      if (!closing) log.error({ consumer: name }, "events consumer stopped unexpectedly");
    })
    .catch((err: unknown) => log.error({ err, consumer: name }, "events consumer failed"));
  return {
    close: async () => {
      closing = true;
      await messages.close();
      await loop;
    },
  };
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, name: string, subject: string): Promise<void> {
  try {
    await jsm.consumers.info(stream, name);
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
    // Replicas starting together may both add it; the server accepts an identical config twice.
    await jsm.consumers.add(stream, {
      durable_name: name,
      filter_subject: subject,
      ack_policy: AckPolicy.Explicit,
      ack_wait: ACK_WAIT_NS,
    });
  }
}
