import {
  ensureStream,
  eventsStreamConfig,
  startPullConsumer,
  type NatsConnection,
  type PullConsumer,
  type PullHandler,
  type StreamNames,
} from "@herald/runtime";

/** Delay before a message whose handling failed (database down) comes back. */
export const RETRY_DELAY_MS = 5_000;
const ACK_WAIT_MS = 60_000;
/** Events are rare: short fetches let the registry stop within a second. */
const FETCH_EXPIRES_MS = 1_000;

export type EventsConsumer = PullConsumer;

/**
 * A durable pull consumer of one subject of the events stream (startPullConsumer).
 * Durable, so replicas share the work and a message published while we were down is
 * still handled; acks are explicit and left to the handler.
 */
export async function startEventsConsumer(
  opts: {
    nc: NatsConnection;
    names: StreamNames;
    /** Durable name before the namespace prefix, e.g. "device-registry-app-deleted". */
    durable: string;
    subject: string;
  },
  handler: PullHandler,
): Promise<EventsConsumer> {
  const { nc, names } = opts;
  await ensureStream(nc, eventsStreamConfig(names), handler.log);
  return startPullConsumer(
    nc,
    {
      stream: names.eventsStream,
      durable: names.consumer(opts.durable),
      filterSubject: opts.subject,
      ackWaitMs: ACK_WAIT_MS,
    },
    { fetchExpiresMs: FETCH_EXPIRES_MS, ...handler },
  );
}
