import { fromBinary } from "@bufbuild/protobuf";
import type { JsMsg } from "@nats-io/jetstream";
import { Platform } from "@herald/proto/common";
import { OutcomeBatchSchema, OutcomeKind } from "@herald/proto/delivery";
import {
  ATTR,
  inSpan,
  linkFromHeaders,
  ROOT_CONTEXT,
  SpanKind,
  startPullConsumer,
  type Logger,
  type NatsConnection,
  type PullConsumer,
  type StreamNames,
} from "@herald/runtime";
import type { CampaignMetrics } from "./metrics.js";
import { OUTCOME_KINDS, type OutcomeBatchRecord, type OutcomeStore, type PlatformNumber } from "./outcome-store.js";
import { isUuid } from "./campaign-checks.js";

export interface OutcomeConsumerOptions {
  nc: NatsConnection;
  names: StreamNames;
  store: OutcomeStore;
  metrics: CampaignMetrics;
  log: Logger;
  /** Webhook events were written to the outbox: publish them now. */
  onEvents: () => void;
}

export type OutcomeConsumer = PullConsumer;

/** Messages asked for in one fetch; what has arrived of them, up to all, is recorded in one transaction. */
const FETCH_MAX = 100;
const RETRY_DELAY_MS = 2_000;
const ACK_WAIT_MS = 30_000;
const MAX_REASON_LENGTH = 200;

const KNOWN_KINDS = new Set([OutcomeKind.DELIVERED, OutcomeKind.FAILED, OutcomeKind.BOUNCED, OutcomeKind.THROTTLED]);
const PLATFORMS = new Set<Platform>([Platform.IOS, Platform.ANDROID, Platform.WEB]);

/**
 * The durable pull consumer of the senders' OutcomeBatch messages, shared by every
 * replica. Up to 100 messages are recorded in one transaction and acked only after it
 * commits, so a crash means redelivery, which the batch key (campaign, platform,
 * sequence) of receipt_batches turns into a no-op.
 *
 * Each fetch's messages are recorded as they arrive (a batch of what has arrived, one at
 * a time), not when the fetch ends: a campaign's last outcomes are not held back waiting
 * for more.
 */
export function startOutcomeConsumer(opts: OutcomeConsumerOptions): Promise<OutcomeConsumer> {
  const { nc, names, store, metrics, log } = opts;

  // One consumer span per group of messages, linked to the trace of each (its sender's batch).
  const record = (messages: JsMsg[]) =>
    inSpan(
      "process outcome",
      {
        kind: SpanKind.CONSUMER,
        parent: ROOT_CONTEXT,
        links: messages.flatMap((m) => linkFromHeaders(m.headers) ?? []),
        attributes: { "messaging.system": "nats", [ATTR.batchSize]: messages.length },
      },
      async () => {
        const batches: OutcomeBatchRecord[] = [];
        const decoded: JsMsg[] = [];
        for (const m of messages) {
          const batch = decode(m, log);
          if (!batch) continue;
          decoded.push(m);
          if (batch.deviceIds.length > 0) batches.push(batch);
        }
        try {
          const { byKind, completed, events } = await store.record(batches);
          if (events) opts.onEvents();
          for (const kind of OUTCOME_KINDS) if (byKind[kind] > 0) metrics.outcomesRecorded.inc({ kind }, byKind[kind]);
          for (const campaignId of completed) log.info({ campaignId }, "campaign completed");
        } catch (err) {
          log.warn({ err, messages: decoded.length }, "recording outcomes failed; they will be redelivered");
          for (const m of decoded) m.nak(RETRY_DELAY_MS);
          return;
        }
        for (const m of decoded) m.ack();
      },
    );

  return startPullConsumer(
    nc,
    {
      stream: names.outcomesStream,
      durable: names.consumer("campaign-outcomes"),
      filterSubject: names.outcomesWildcard,
      ackWaitMs: ACK_WAIT_MS,
    },
    // One transaction at a time.
    { log, concurrency: 1, batchSize: FETCH_MAX, handleBatch: record },
  );
}

/** The outcome batch of one message; undefined (and the message terminated) when it cannot be read. */
function decode(m: JsMsg, log: Logger): OutcomeBatchRecord | undefined {
  try {
    return decodeOutcomeBatch(m.data);
  } catch (err) {
    log.error({ err, subject: m.subject, seq: m.seq }, "undecodable outcome batch dropped");
    // No reason text: nats-server 2.9 ignores a "+TERM <reason>" (the message would stay unacked).
    m.term();
    return undefined;
  }
}

/** A sender's OutcomeBatch as the store records it; throws when it cannot be read. */
export function decodeOutcomeBatch(data: Uint8Array): OutcomeBatchRecord {
  const batch = fromBinary(OutcomeBatchSchema, data);
  if (!isUuid(batch.campaignId)) throw new Error("campaign_id is not a UUID");
  if (!PLATFORMS.has(batch.platform)) throw new Error("platform is not ios, android or web");
  const record: OutcomeBatchRecord = {
    campaignId: batch.campaignId.toLowerCase(),
    platform: batch.platform as PlatformNumber,
    sequence: batch.sequence,
    deviceIds: [],
    outcomes: [],
    reasons: [],
    attempts: [],
  };
  for (const o of batch.outcomes) {
    if (!isUuid(o.deviceId)) throw new Error("device_id is not a UUID");
    // A sender always names the kind; an unknown one still counts the device, as failed.
    const known = KNOWN_KINDS.has(o.kind);
    const kind = known ? o.kind : OutcomeKind.FAILED;
    record.deviceIds.push(o.deviceId.toLowerCase());
    record.outcomes.push(kind);
    record.reasons.push(
      kind === OutcomeKind.DELIVERED
        ? null
        : (known ? o.reason : o.reason || `UnknownOutcomeKind:${o.kind}`).slice(0, MAX_REASON_LENGTH),
    );
    record.attempts.push(o.attempts);
  }
  return record;
}
