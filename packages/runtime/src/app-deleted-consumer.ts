import { fromBinary } from "@bufbuild/protobuf";
import { AppDeletedSchema } from "@herald/proto/delivery";
import type { JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { type PullConsumer, startPullConsumer } from "./consumer.js";
import { eventsStreamConfig, type StreamNames } from "./streams.js";
import { ensureStream } from "./nats.js";
import { isUuid } from "./uuid.js";

/** Rows per DELETE of a deleted app's rows: short statements keep locks and WAL bursts small for 1M-device apps. */
export const APP_DELETE_BATCH = 5_000;
/** Delay before a deletion that failed (database down) is tried again. */
const RETRY_DELAY_MS = 5_000;
const ACK_WAIT_MS = 60_000;
/** Deletions are rare: short fetches let the service stop within a second. */
const FETCH_EXPIRES_MS = 1_000;

/**
 * Runs one batched DELETE again and again (`deleteSome(APP_DELETE_BATCH)`), telling
 * JetStream the message is still in work between batches, and answers the rows deleted.
 */
export type InBatches = (deleteSome: (limit: number) => Promise<number>) => Promise<number>;

export interface AppDeletedConsumerOptions {
  nc: NatsConnection;
  names: StreamNames;
  log: Logger;
  /** The service's own durable on app.deleted.v2, before the namespace prefix. */
  durable: string;
  /**
   * The durable a service of the previous release read the JSON app.deleted subject with
   * (StreamNames.legacyAppDeleted): that subject is drained with it, and JSON is read as
   * well as protobuf. Remove one release later.
   */
  legacyDurable?: string;
  /** What `remove` deletes, for the log lines ("devices, segments, …"). */
  what: string;
  /** Deletes everything of the app the service keeps and answers what it counted (logged). */
  remove(appId: string, inBatches: InBatches): Promise<Record<string, number>>;
}

/**
 * The one consumer of app.deleted (herald.v1.AppDeleted, published by the credential
 * service): each service that keeps rows of an app has its own durable, one app at a time
 * (a deletion can be a million rows). The ack comes only after `remove` has resolved, so a
 * crash mid-way redelivers and the deletion, idempotent, simply continues; a failure
 * comes back after 5 s; a message without a valid app id is terminated.
 */
export async function startAppDeletedConsumer(opts: AppDeletedConsumerOptions): Promise<PullConsumer> {
  const { nc, names, log } = opts;
  await ensureStream(nc, eventsStreamConfig(names), log);
  const subjects = [{ durable: opts.durable, subject: names.appDeleted }];
  if (opts.legacyDurable !== undefined) {
    subjects.push({ durable: opts.legacyDurable, subject: names.legacyAppDeleted });
  }
  const parse = opts.legacyDurable === undefined ? protobufAppId : protobufOrJsonAppId;
  const consumers = await Promise.all(
    subjects.map(({ durable, subject }) =>
      startPullConsumer(
        nc,
        {
          stream: names.eventsStream,
          durable: names.consumer(durable),
          filterSubject: subject,
          ackWaitMs: ACK_WAIT_MS,
        },
        { log, concurrency: 1, fetchExpiresMs: FETCH_EXPIRES_MS, handle: (m) => handle(m, parse, opts) },
      ),
    ),
  );
  // Both at once: each waits for its open fetch to run out.
  return { stop: async () => void (await Promise.all(consumers.map((c) => c.stop()))) };
}

async function handle(
  m: JsMsg,
  parse: (data: Uint8Array) => unknown,
  { log, what, remove }: AppDeletedConsumerOptions,
): Promise<void> {
  let appId: unknown;
  try {
    appId = parse(m.data);
  } catch {
    appId = undefined;
  }
  if (typeof appId !== "string" || !isUuid(appId)) {
    log.warn({ subject: m.subject, seq: m.seq }, "app.deleted message without a valid app_id; dropped");
    // No reason argument: nats-server 2.9 does not recognise "+TERM <reason>" and redelivers.
    m.term();
    return;
  }
  const inBatches: InBatches = async (deleteSome) => {
    let deleted = 0;
    for (;;) {
      const n = await deleteSome(APP_DELETE_BATCH);
      deleted += n;
      // Fewer than a batch: nothing of the app was left when that statement ran.
      if (n < APP_DELETE_BATCH) return deleted;
      m.working();
    }
  };
  try {
    const counts = await remove(appId, inBatches);
    m.ack();
    log.info({ appId, ...counts }, `${what} of deleted app removed`);
  } catch (err) {
    log.error({ err, appId }, `removing ${what} of deleted app failed; will retry`);
    m.nak(RETRY_DELAY_MS);
  }
}

function protobufAppId(data: Uint8Array): string {
  return fromBinary(AppDeletedSchema, data).appId;
}

/**
 * Earlier releases published app.deleted as JSON, `{"app_id": …, "deleted_at": …}`, on
 * the legacy subject; for one release that form is still read (messages left in the
 * stream, credential pods not yet upgraded during a rolling upgrade). Either is read on
 * either subject: JSON starts with "{", which as a protobuf tag (field 15, start of a
 * group) AppDeleted never has.
 */
function protobufOrJsonAppId(data: Uint8Array): unknown {
  if (data[0] !== LEGACY_JSON_START) return protobufAppId(data);
  const payload: unknown = JSON.parse(new TextDecoder().decode(data));
  return (payload as { app_id?: unknown } | null)?.app_id;
}

const LEGACY_JSON_START = "{".charCodeAt(0);
