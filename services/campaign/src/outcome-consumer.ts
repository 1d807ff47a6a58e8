import { fromBinary } from "@bufbuild/protobuf";
import type { JsMsg } from "@nats-io/jetstream";
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
import { OUTCOME_KINDS, type OutcomeKindName, type OutcomeRecord, type OutcomeStore } from "./outcome-store.js";
import { isUuid } from "./campaign-checks.js";

export interface OutcomeConsumerOptions {
  nc: NatsConnection;
  names: StreamNames;
  store: OutcomeStore;
  metrics: CampaignMetrics;
  log: Logger;
}

export type OutcomeConsumer = PullConsumer;

/** Messages asked for in one fetch; what has arrived of them, up to all, is recorded in one transaction. */
const FETCH_MAX = 100;
const RETRY_DELAY_MS = 2_000;
const ACK_WAIT_MS = 30_000;
const MAX_REASON_LENGTH = 200;
const MAX_ATTEMPTS = 2 ** 31 - 1;

const KIND: Partial<Record<OutcomeKind, OutcomeKindName>> = {
  [OutcomeKind.DELIVERED]: "delivered",
  [OutcomeKind.FAILED]: "failed",
  [OutcomeKind.BOUNCED]: "bounced",
  [OutcomeKind.THROTTLED]: "throttled",
};

/**
 * The durable pull consumer of the senders' OutcomeBatch messages, shared by every
 * replica. Up to 100 messages are recorded in one transaction and acked only after it
 * commits, so a crash means redelivery, which the outcome table turns into a no-op.
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
        const outcomes: OutcomeRecord[] = [];
        const decoded: JsMsg[] = [];
        for (const m of messages) {
          const batch = decode(m, log);
          if (!batch) continue;
          decoded.push(m);
          outcomes.push(...batch);
        }
        try {
          const { byKind, completed } = await store.record(outcomes);
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

/** The outcomes of one message; undefined (and the message terminated) when it cannot be read. */
function decode(m: JsMsg, log: Logger): OutcomeRecord[] | undefined {
  let campaignId: string;
  let outcomes: OutcomeRecord[];
  try {
    const batch = fromBinary(OutcomeBatchSchema, m.data);
    campaignId = batch.campaignId;
    if (!isUuid(campaignId)) throw new Error("campaign_id is not a UUID");
    outcomes = batch.outcomes.map((o) => {
      if (!isUuid(o.deviceId)) throw new Error("device_id is not a UUID");
      return {
        campaignId: campaignId.toLowerCase(),
        deviceId: o.deviceId.toLowerCase(),
        // A sender always names the kind; an unknown one still counts the device, as failed.
        kind: KIND[o.kind] ?? "failed",
        reason: (KIND[o.kind] ? o.reason : o.reason || `UnknownOutcomeKind:${o.kind}`).slice(0, MAX_REASON_LENGTH),
        attempts: Math.min(o.attempts, MAX_ATTEMPTS),
      };
    });
  } catch (err) {
    log.error({ err, subject: m.subject, seq: m.seq }, "undecodable outcome batch dropped");
    // No reason text: nats-server 2.9 ignores a "+TERM <reason>" (the message would stay unacked).
    m.term();
    return undefined;
  }
  return outcomes;
}
