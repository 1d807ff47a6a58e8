import {
  type Logger,
  type NatsConnection,
  type PullConsumer,
  startAppDeletedConsumer,
  type StreamNames,
} from "@herald/runtime";
import { APP_TABLES, type AppTable, type PgWebhookStore } from "./webhook-store.js";

/** The webhooks service's own durable on app.deleted.v2 (the device registry has its own). */
export const APP_DELETED_DURABLE = "webhooks-app-deleted";

/**
 * Removes the webhook endpoints of apps that the credential service deleted, with their
 * events, deliveries and the attempts recorded on them, each table in batches
 * (startAppDeletedConsumer: acked after the last batch, so a crash mid-way continues).
 */
export function startWebhooksAppDeletedConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: Pick<PgWebhookStore, "deleteAppRows">;
  log: Logger;
}): Promise<PullConsumer> {
  const { store } = opts;
  return startAppDeletedConsumer({
    ...opts,
    durable: APP_DELETED_DURABLE,
    what: "webhook endpoints, events and deliveries",
    remove: async (appId, inBatches) => {
      const deleted = { deliveries: 0, events: 0, endpoints: 0 } satisfies Record<AppTable, number>;
      for (const table of APP_TABLES) {
        deleted[table] = await inBatches((limit) => store.deleteAppRows(table, appId, limit));
      }
      return deleted;
    },
  });
}
