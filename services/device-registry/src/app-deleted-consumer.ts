import type { JsMsg } from "@nats-io/jetstream";
import type { Logger, NatsConnection, StreamNames } from "@herald/runtime";
import { RETRY_DELAY_MS, startEventsConsumer, type EventsConsumer } from "./events-consumer.js";
import { isUuid } from "./ids.js";
import type { AndroidChannelStore } from "./android-channel-store.js";
import type { InAppMessageStore } from "./in-app-message-store.js";
import type { SegmentStore } from "./segment-store.js";
import type { DeviceStore } from "./store.js";

/** Rows per DELETE: short statements keep locks and WAL bursts small for 1M-device apps. */
export const DELETE_BATCH = 5_000;

/**
 * Removes the devices, segments, Android channels and in-app messages of apps that the
 * credential service deleted (the per-device in-app rows go with their devices). The ack
 * comes only after the last batch, so a crash mid-way redelivers and the (idempotent)
 * deletion simply continues.
 */
export function startAppDeletedConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: DeviceStore;
  segments: SegmentStore;
  channels: Pick<AndroidChannelStore, "deleteAppChannels">;
  inAppMessages: Pick<InAppMessageStore, "deleteAppMessages">;
  log: Logger;
}): Promise<EventsConsumer> {
  const { store, segments, channels, inAppMessages, log } = opts;
  return startEventsConsumer({
    ...opts,
    durable: "device-registry-app-deleted",
    subject: opts.names.appDeleted,
    maxMessages: 16,
    process: async (messages) => {
      for await (const m of messages) await handle(m, { store, segments, channels, inAppMessages }, log);
    },
  });
}

interface AppStores {
  store: DeviceStore;
  segments: SegmentStore;
  channels: Pick<AndroidChannelStore, "deleteAppChannels">;
  inAppMessages: Pick<InAppMessageStore, "deleteAppMessages">;
}

async function handle(m: JsMsg, { store, segments, channels, inAppMessages }: AppStores, log: Logger): Promise<void> {
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
    const deletedSegments = await segments.deleteAppSegments(appId);
    const deletedChannels = await channels.deleteAppChannels(appId);
    const deletedInAppMessages = await inAppMessages.deleteAppMessages(appId);
    m.ack();
    log.info(
      { appId, deleted, deletedSegments, deletedChannels, deletedInAppMessages },
      "devices, segments, channels and in-app messages of deleted app removed",
    );
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
