import { type Logger, type NatsConnection, startAppDeletedConsumer, type StreamNames } from "@herald/runtime";
import type { EventsConsumer } from "./events-consumer.js";
import type { AndroidChannelStore } from "./android-channel-store.js";
import type { InAppMessageStore } from "./in-app-message-store.js";
import type { SegmentStore } from "./segment-store.js";
import type { DeviceStore } from "./device-store.js";

export const APP_DELETED_DURABLE = "device-registry-app-deleted-v2";
/** The previous release's durable, on the JSON subject: drained here, remove one release later. */
export const LEGACY_APP_DELETED_DURABLE = "device-registry-app-deleted";

/**
 * Removes the devices (in batches), segments, Android channels and in-app messages of
 * apps that the credential service deleted; the per-device in-app rows go with their
 * devices (startAppDeletedConsumer: acked after the last batch, so a crash mid-way continues).
 */
export function startRegistryAppDeletedConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: Pick<DeviceStore, "deleteAppDevices">;
  segments: Pick<SegmentStore, "deleteAppSegments">;
  channels: Pick<AndroidChannelStore, "deleteAppChannels">;
  inAppMessages: Pick<InAppMessageStore, "deleteAppMessages">;
  log: Logger;
}): Promise<EventsConsumer> {
  const { store, segments, channels, inAppMessages } = opts;
  return startAppDeletedConsumer({
    ...opts,
    durable: APP_DELETED_DURABLE,
    legacyDurable: LEGACY_APP_DELETED_DURABLE,
    what: "devices, segments, channels and in-app messages",
    remove: async (appId, inBatches) => ({
      deleted: await inBatches((limit) => store.deleteAppDevices(appId, limit)),
      deletedSegments: await segments.deleteAppSegments(appId),
      deletedChannels: await channels.deleteAppChannels(appId),
      deletedInAppMessages: await inAppMessages.deleteAppMessages(appId),
    }),
  });
}
