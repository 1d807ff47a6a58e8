import { fromBinary } from "@bufbuild/protobuf";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JsMsg,
} from "@nats-io/jetstream";
import { OutcomeBatchSchema, OutcomeKind } from "@herald/proto/delivery";
import {
  ATTR,
  inSpan,
  linkFromHeaders,
  readyBatches,
  ROOT_CONTEXT,
  SpanKind,
  type Logger,
  type NatsConnection,
  type StreamNames,
} from "@herald/runtime";
import type { CampaignMetrics } from "./metrics.js";
import { OUTCOME_KINDS, type OutcomeKindName, type OutcomeRecord, type OutcomeStore } from "./outcome-store.js";
import { isUuid } from "./request-checks.js";

export interface OutcomeConsumerOptions {
  nc: NatsConnection;
  names: StreamNames;
  store: OutcomeStore;
  metrics: CampaignMetrics;
  log: Logger;
}

export interface OutcomeConsumer {
  stop(): Promise<void>;
}

/** Outcome messages recorded in one transaction, at most: those that have arrived, up to 100. */
const GROUP_MAX = 100;
/** Messages kept pulled ahead of recording: the next group arrives while one is written. */
const PULL_MAX = 2 * GROUP_MAX;
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
 * One continuous pull (consume), not a fetch after each group: a fetch that misses two
 * of the server's idle heartbeats (its 1 s expiry gave them 500 ms each, and a loaded
 * event loop or server can miss that) is ended by the client while the server still
 * holds its request, and what the server then sends to the abandoned inbox waits out
 * the ack wait (30 s) before anyone sees it again: its campaign completes that much
 * late. consume() answers missed heartbeats by pulling again on the same inbox. A group
 * is what has arrived (readyBatches), so a campaign's last outcomes are not held back
 * waiting for more.
 */
export async function startOutcomeConsumer(opts: OutcomeConsumerOptions): Promise<OutcomeConsumer> {
  const { nc, names, store, metrics, log } = opts;
  const durable = names.consumer("campaign-outcomes");
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(names.outcomesStream, {
    durable_name: durable,
    filter_subject: names.outcomesWildcard,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ACK_WAIT_MS * 1e6,
    max_deliver: -1,
  });
  const consumer = await jetstream(nc).consumers.get(names.outcomesStream, durable);
  let stopped = false;
  let current: ConsumerMessages | undefined;

  const record = async (messages: JsMsg[]) => {
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
  };

  // One consumer span per group of messages, linked to the trace of each (its sender's batch).
  const recordGroup = (messages: JsMsg[]) =>
    inSpan(
      "process outcome",
      {
        kind: SpanKind.CONSUMER,
        parent: ROOT_CONTEXT,
        links: messages.flatMap((m) => linkFromHeaders(m.headers) ?? []),
        attributes: { "messaging.system": "nats", [ATTR.batchSize]: messages.length },
      },
      () => record(messages),
    );

  const loop = (async () => {
    while (!stopped) {
      try {
        current = await consumer.consume({ max_messages: PULL_MAX });
        for await (const group of readyBatches(current, GROUP_MAX)) await recordGroup(group);
        if (stopped) break;
        log.warn("the outcomes stream's consumer ended; pulling again");
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, "consuming the outcomes stream failed");
      } finally {
        current = undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await current?.close();
      await loop;
    },
  };
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
