import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { streamNames } from "@herald/runtime";

/**
 * Deletes the JetStream streams of one namespace (`<namespace>_EVENTS`, `_DELIVERY`,
 * `_OUTCOMES`, `_WEBHOOKS`) with their consumers: a test stack's or a benchmark run's, once
 * it is done, as its PostgreSQL schemas are dropped. Without it every run left its streams
 * and their files on the machine's NATS. A stream already gone is no error.
 */
export async function deleteNamespaceStreams(natsUrl: string, namespace: string): Promise<void> {
  const nc = await connect({ servers: natsUrl.split(",") });
  try {
    const jsm = await jetstreamManager(nc);
    const { eventsStream, deliveryStream, outcomesStream, webhooksStream } = streamNames(namespace);
    for (const name of [eventsStream, deliveryStream, outcomesStream, webhooksStream]) {
      await jsm.streams.delete(name).catch((err: Error) => {
        if (!/stream not found/i.test(err.message)) throw err;
      });
    }
  } finally {
    await nc.close();
  }
}
