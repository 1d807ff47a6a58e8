import { fromBinary } from "@bufbuild/protobuf";
import type { JsMsg } from "@nats-io/jetstream";
import { AppDeletedSchema } from "@herald/proto/delivery";
import type { Logger, NatsConnection, StreamNames } from "@herald/runtime";
import { RETRY_DELAY_MS, startEventsConsumer, type EventsConsumer } from "./events-consumer.js";
import { isUuid } from "./ids.js";
import type { AndroidChannelStore } from "./android-channel-store.js";
import type { InAppMessageStore } from "./in-app-message-store.js";
import type { SegmentStore } from "./segment-store.js";
import type { DeviceStore } from "./device-store.js";

/** Rows per DELETE: short statements keep locks and WAL bursts small for 1M-device apps. */
export const DELETE_BATCH = 5_000;

/**
 * Removes the devices, segments, Android channels and in-app messages of apps that the
 * credential service deleted (the per-device in-app rows go with their devices). The ack
 * comes only after the last batch, so a crash mid-way redelivers and the (idempotent)
 * deletion simply continues.
 */
export async function startAppDeletedConsumer(opts: {
  nc: NatsConnection;
  names: StreamNames;
  store: DeviceStore;
  segments: SegmentStore;
  channels: Pick<AndroidChannelStore, "deleteAppChannels">;
  inAppMessages: Pick<InAppMessageStore, "deleteAppMessages">;
  log: Logger;
}): Promise<EventsConsumer> {
  const { store, segments, channels, inAppMessages, log } = opts;
  // One app at a time: a deletion can be a million rows.
  const handler = {
    log,
    concurrency: 1,
    handle: (m: JsMsg) => handle(m, { store, segments, channels, inAppMessages }, log),
  };
  const consumers = await Promise.all([
    startEventsConsumer({ ...opts, durable: APP_DELETED_DURABLE, subject: opts.names.appDeleted }, handler),
    // The JSON events of the previous release, on their own subject with the durable that
    // release used (streams.ts, legacyAppDeleted): drained here, remove one release later.
    startEventsConsumer(
      { ...opts, durable: LEGACY_APP_DELETED_DURABLE, subject: opts.names.legacyAppDeleted },
      handler,
    ),
  ]);
  return { stop: async () => void (await Promise.all(consumers.map((c) => c.stop()))) };
}

export const APP_DELETED_DURABLE = "device-registry-app-deleted-v2";
export const LEGACY_APP_DELETED_DURABLE = "device-registry-app-deleted";

interface AppStores {
  store: DeviceStore;
  segments: SegmentStore;
  channels: Pick<AndroidChannelStore, "deleteAppChannels">;
  inAppMessages: Pick<InAppMessageStore, "deleteAppMessages">;
}

async function handle(m: JsMsg, { store, segments, channels, inAppMessages }: AppStores, log: Logger): Promise<void> {
  const appId = parseAppId(m.data);
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

/**
 * The app id of an AppDeleted protobuf. Earlier releases published app.deleted as JSON,
 * `{"app_id": …, "deleted_at": …}`, on the legacy subject; for one release that form is
 * still read (messages left in the stream, credential pods not yet upgraded during a
 * rolling upgrade): remove the JSON branch in the next release. Either is read on either
 * subject: JSON starts with "{", which as a protobuf tag (field 15, start of a group)
 * AppDeleted never has.
 */
function parseAppId(data: Uint8Array): string | undefined {
  try {
    const appId = data[0] === LEGACY_JSON_START ? legacyJsonAppId(data) : fromBinary(AppDeletedSchema, data).appId;
    return typeof appId === "string" && isUuid(appId) ? appId : undefined;
  } catch {
    return undefined;
  }
}

const LEGACY_JSON_START = "{".charCodeAt(0);

function legacyJsonAppId(data: Uint8Array): unknown {
  const payload: unknown = JSON.parse(new TextDecoder().decode(data));
  return (payload as { app_id?: unknown } | null)?.app_id;
}
