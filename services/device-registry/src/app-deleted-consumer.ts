import {
  AckPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { ensureStream, eventsStreamConfig, type Logger, type NatsConnection, type StreamNames } from "@herald/runtime";
import { isUuid } from "./ids.js";
import type { DeviceStore } from "./store.js";

/** Rows per DELETE: short statements keep locks and WAL bursts small for 1M-device apps. */
export const DELETE_BATCH = 5_000;
const RETRY_DELAY_MS = 5_000;
const ACK_WAIT_NS = 60 * 1e9;

export interface AppDeletedConsumer {
  close(): Promise<void>;
}

/**
 * Removes the devices of apps that the credential service deleted. A durable pull
 * consumer, so replicas share the work and a message published while we were down is
 * still handled; the ack comes only after the last batch, so a crash mid-way redelivers
 * and the (idempotent) deletion simply continues.
 */
export async function startAppDeletedConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: DeviceStore;
  log: Logger;
}): Promise<AppDeletedConsumer> {
  const { nc, names, store, log } = opts;
  const jsm = await ensureStream(nc, eventsStreamConfig(names));
  const name = names.consumer("device-registry-app-deleted");
  await ensureConsumer(jsm, names.eventsStream, name, names.appDeleted);
  const consumer = await jetstream(nc).consumers.get(names.eventsStream, name);
  const messages = await consumer.consume({ max_messages: 16 });
  let closing = false;
  const loop = (async () => {
    for await (const m of messages) await handle(m, store, log);
    if (!closing) log.error({ consumer: name }, "app.deleted consumer stopped unexpectedly");
  })();
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

async function handle(m: JsMsg, store: DeviceStore, log: Logger): Promise<void> {
  const appId = parseAppId(m.string());
  if (!appId) {
    log.warn({ subject: m.subject, seq: m.seq }, "app.deleted message without a valid app_id; dropped");
    // No reason argument: nats-server 2.9 does not recognise "+TERM <reason>" and redelivers.
    m.term();
    return;
  }
  try {
    let deleted = 0;
    for (;;) {
      const n = await store.deleteAppDevices(appId, DELETE_BATCH);
      deleted += n;
      // Fewer than a batch: nothing of the app was left when that statement ran.
      if (n < DELETE_BATCH) break;
      m.working();
    }
    m.ack();
    log.info({ appId, deleted }, "devices of deleted app removed");
  } catch (err) {
    log.error({ err, appId }, "removing devices of deleted app failed; will retry");
    m.nak(RETRY_DELAY_MS);
  }
}

function parseAppId(text: string): string | undefined {
  try {
    const payload: unknown = JSON.parse(text);
    const appId = (payload as { app_id?: unknown } | null)?.app_id;
    return typeof appId === "string" && isUuid(appId) ? appId : undefined;
  } catch {
    return undefined;
  }
}
