import { fromBinary } from "@bufbuild/protobuf";
import { AppDeletedSchema } from "@herald/proto/delivery";
import type { JsMsg } from "@nats-io/jetstream";
import {
  ensureStream,
  eventsStreamConfig,
  isUuid,
  type Logger,
  type NatsConnection,
  type PullConsumer,
  startPullConsumer,
  type StreamNames,
} from "@herald/runtime";
import { APP_TABLES, type AppTable, type PgWebhookStore } from "./webhook-store.js";

/** The webhooks service's own durable on app.deleted.v2 (the device registry has its own). */
export const APP_DELETED_DURABLE = "webhooks-app-deleted";
/** Rows per DELETE: short statements keep locks and WAL bursts small for an app with many deliveries. */
export const DELETE_BATCH = 5_000;
const RETRY_DELAY_MS = 5_000;
const ACK_WAIT_MS = 60_000;

/**
 * Removes the webhook endpoints of apps that the credential service deleted, with their
 * events, deliveries and the attempts recorded on them. The ack comes only after the last
 * batch, so a crash mid-way redelivers and the deletion, idempotent, simply continues.
 */
export async function startAppDeletedConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: Pick<PgWebhookStore, "deleteAppRows">;
  log: Logger;
}): Promise<PullConsumer> {
  const { nc, names, store, log } = opts;
  await ensureStream(nc, eventsStreamConfig(names));
  return startPullConsumer(
    nc,
    {
      stream: names.eventsStream,
      durable: names.consumer(APP_DELETED_DURABLE),
      filterSubject: names.appDeleted,
      ackWaitMs: ACK_WAIT_MS,
    },
    // One app at a time: a deletion can be many batches. Deletions are rare: short fetches
    // let the service stop within a second.
    { log, concurrency: 1, fetchExpiresMs: 1_000, handle: (m) => handle(m, store, log) },
  );
}

async function handle(m: JsMsg, store: Pick<PgWebhookStore, "deleteAppRows">, log: Logger): Promise<void> {
  const appId = parseAppId(m.data);
  if (!appId) {
    log.warn({ subject: m.subject, seq: m.seq }, "app.deleted message without a valid app_id; dropped");
    m.term();
    return;
  }
  try {
    const deleted = { deliveries: 0, events: 0, endpoints: 0 } satisfies Record<AppTable, number>;
    for (const table of APP_TABLES) {
      for (;;) {
        const n = await store.deleteAppRows(table, appId, DELETE_BATCH);
        deleted[table] += n;
        // Fewer than a batch: nothing of the app was left in the table when that statement ran.
        if (n < DELETE_BATCH) break;
        m.working();
      }
    }
    m.ack();
    log.info({ appId, ...deleted }, "webhook endpoints, events and deliveries of deleted app removed");
  } catch (err) {
    log.error({ err, appId }, "removing webhooks of deleted app failed; will retry");
    m.nak(RETRY_DELAY_MS);
  }
}

function parseAppId(data: Uint8Array): string | undefined {
  try {
    const { appId } = fromBinary(AppDeletedSchema, data);
    return isUuid(appId) ? appId : undefined;
  } catch {
    return undefined;
  }
}
