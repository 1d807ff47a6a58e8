import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type StreamConfig, type JetStreamManager } from "@nats-io/jetstream";
import type { Logger } from "pino";

export type { NatsConnection };

export async function connectNats(url: string, name: string, log: Logger): Promise<NatsConnection> {
  const nc = await connect({
    servers: url.split(","),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
  });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect" || s.type === "reconnect" || s.type === "error") {
        log.warn({ nats: s.type }, "nats connection status");
      }
    }
  })();
  return nc;
}

/** Creates the stream, or updates it to the given config when it exists. */
export async function ensureStream(
  nc: NatsConnection,
  config: Partial<StreamConfig> & { name: string; subjects: string[] },
): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!/stream not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add(config);
  }
  return jsm;
}
export { headers as natsHeaders } from "@nats-io/transport-node";

/**
 * How long a pull (a JetStream fetch) waits on the server for messages. nats.js has the
 * server send idle heartbeats every half of it and ends a fetch itself after two missed
 * ones, with a warning and a pause of the consumer's loop; the server holds the request
 * until the client's unsubscribe reaches it, and a message it sends in that moment goes
 * to an inbox nobody reads and comes back only after the consumer's ack wait. With 2 s a
 * sender under load missed two (the bench's tracing part); with 5 s the client checks
 * every 2.5 s and gives up after two checks in a row find nothing heard for longer than
 * that, so only 5 to 7.5 s without a word from the server ends a fetch (an 8 s freeze of
 * NATS did it to the campaign service's; the chaos suite's 6 s freeze did not, in two
 * runs). For the same reason a consumer that stops lets its fetch run out rather than
 * abandon it.
 */
export const PULL_EXPIRES_MS = 5_000;
