import { setMaxListeners } from "node:events";
import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import {
  DeliveryBatchSchema,
  DeviceInvalidatedSchema,
  OutcomeBatchSchema,
  type DeliveryBatch,
  type Outcome,
} from "@herald/proto/delivery";
import {
  ATTR,
  context,
  contextFromHeaders,
  deliveryStreamConfig,
  ensureStream,
  eventsStreamConfig,
  failSpan,
  natsHeaders,
  outcomesStreamConfig,
  PULL_EXPIRES_MS,
  SpanKind,
  trace,
  tracedPublish,
  tracer,
  type Logger,
  type NatsConnection,
  type PlatformSubject,
  type StreamNames,
} from "@herald/runtime";
import type { BatchProcessor } from "./batch-processor.js";
import { Limiter } from "./limiter.js";
import { publishUntilStored, storePolicy } from "./publish-until-stored.js";

export interface DeliveryConsumerOptions {
  nc: NatsConnection;
  names: StreamNames;
  platform: PlatformSubject;
  processor: BatchProcessor<unknown>;
  log: Logger;
  /** Batches processed at once by this process. */
  concurrentBatches: number;
  /** How long a batch may go without an ack or a working() before JetStream redelivers it. */
  ackWaitMs?: number;
  /** On stop, how long in-flight batches may take before they are handed back. */
  drainMs?: number;
  /** After a batch is acked: its duration and the final outcome of each device. */
  onBatch?: (batch: DeliveryBatch, ms: number, outcomes: Outcome[]) => void;
}

export interface DeliveryConsumer {
  stop(): Promise<void>;
}

const NAK_DELAY_MS = 5_000;

/**
 * The durable pull consumer every sender replica shares on `delivery.<platform>`. It
 * pulls only as many batches as it has free slots, keeps each alive with working()
 * while it is sent, publishes the outcomes (and dead-token invalidations) before it
 * acks, and on stop hands back whatever it could not finish: a batch is acked only
 * once its outcomes are stored in JetStream, so a crash loses nothing (at worst the
 * batch in flight is sent again, and its duplicate outcomes are dropped downstream).
 */
export async function startDeliveryConsumer(opts: DeliveryConsumerOptions): Promise<DeliveryConsumer> {
  const { nc, names, platform, log } = opts;
  const ackWaitMs = opts.ackWaitMs ?? 60_000;
  await ensureStream(nc, deliveryStreamConfig(names));
  await ensureStream(nc, outcomesStreamConfig(names));
  await ensureStream(nc, eventsStreamConfig(names));
  const jsm = await jetstreamManager(nc);
  const durable = names.consumer(`sender-${platform}`);
  await jsm.consumers.add(names.deliveryStream, {
    durable_name: durable,
    filter_subject: names.delivery(platform),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ackWaitMs * 1e6,
    max_ack_pending: 10_000,
    max_deliver: -1,
  });
  const js = jetstream(nc);
  const consumer = await js.consumers.get(names.deliveryStream, durable);
  const slots = new Limiter(opts.concurrentBatches);
  const stopping = new AbortController();
  const inflight = new Map<JsMsg, AbortController>();
  const policy = storePolicy(ackWaitMs);

  const handle = async (m: JsMsg) => {
    const abort = new AbortController();
    // Every send of the batch listens on this signal.
    setMaxListeners(0, abort.signal);
    inflight.set(m, abort);
    const heartbeat = setInterval(() => m.working(), Math.max(1_000, ackWaitMs / 3));
    const t0 = Date.now();
    // The consumer span continues the producer's trace (the campaign's fan-out).
    const span = tracer.startSpan(
      `process delivery.${platform}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: { "messaging.system": "nats", "messaging.destination.name": m.subject, [ATTR.platform]: platform },
      },
      contextFromHeaders(m.headers),
    );
    const spanContext = trace.setSpan(context.active(), span);
    try {
      let batch: DeliveryBatch;
      try {
        batch = fromBinary(DeliveryBatchSchema, m.data);
      } catch (err) {
        log.error({ err, seq: m.seq }, "undecodable delivery batch dropped");
        // No reason argument: nats-server 2.9 ignores a term that carries one.
        m.term();
        return;
      }
      span.setAttributes({
        [ATTR.campaignId]: batch.campaignId,
        [ATTR.appId]: batch.appId,
        [ATTR.batchSize]: batch.targets.length,
        [ATTR.batchSequence]: Number(batch.sequence),
      });
      const result = await context.with(spanContext, () => opts.processor.process(batch, abort.signal));
      // The notifications are with the providers now: what follows is only stored, again
      // and again if it must (publishUntilStored), rather than the batch sent twice.
      const store = { policy, signal: abort.signal, log };
      await context.with(spanContext, () =>
        Promise.all(
          result.invalidations.map((inv) => {
            const headers = natsHeaders();
            return publishUntilStored(
              () =>
                tracedPublish("device.invalidated", names.deviceInvalidated, { [ATTR.appId]: inv.appId }, headers, () =>
                  js.publish(names.deviceInvalidated, toBinary(DeviceInvalidatedSchema, inv), {
                    msgID: `inv.${inv.deviceId}.${batch.campaignId}`,
                    headers,
                  }),
                ),
              { ...store, what: "device invalidation" },
            );
          }),
        ),
      );
      const outcomes = create(OutcomeBatchSchema, {
        campaignId: batch.campaignId,
        sequence: batch.sequence,
        platform: batch.platform,
        outcomes: result.outcomes,
      });
      const headers = natsHeaders();
      const body = toBinary(OutcomeBatchSchema, outcomes);
      await context.with(spanContext, () =>
        publishUntilStored(
          () =>
            tracedPublish(
              "outcome",
              names.outcome(batch.campaignId),
              { [ATTR.campaignId]: batch.campaignId, [ATTR.batchSize]: outcomes.outcomes.length },
              headers,
              () =>
                js.publish(names.outcome(batch.campaignId), body, {
                  msgID: `${batch.campaignId}.${platform}.${batch.sequence}`,
                  headers,
                }),
            ),
          { ...store, what: "outcome batch" },
        ),
      );
      m.ack();
      opts.onBatch?.(batch, Date.now() - t0, result.outcomes);
    } catch (err) {
      if (abort.signal.aborted) log.info({ seq: m.seq }, "batch handed back on shutdown");
      else log.warn({ err, seq: m.seq }, "batch failed; redelivering later");
      m.nak(abort.signal.aborted ? 0 : NAK_DELAY_MS);
      failSpan(span, err);
    } finally {
      span.end();
      clearInterval(heartbeat);
      inflight.delete(m);
      slots.release();
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      await slots.acquire();
      slots.release();
      if (stopping.signal.aborted) break;
      const want = slots.available;
      // The iteration fails too, not only the fetch: a pull pending when NATS shuts down
      // ends with "409 server shutdown", which would otherwise end the loop and the process.
      try {
        const messages = await consumer.fetch({ max_messages: want, expires: PULL_EXPIRES_MS });
        for await (const m of messages) {
          if (stopping.signal.aborted) {
            m.nak(0);
            continue;
          }
          await slots.acquire();
          void handle(m);
        }
      } catch (err) {
        log.warn({ err }, "fetch from delivery stream failed");
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();

  return {
    async stop() {
      stopping.abort();
      // In-flight batches drain while the current fetch runs out (what it still brings is
      // handed back at once).
      const deadline = Date.now() + (opts.drainMs ?? 20_000);
      await loop;
      while (inflight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      for (const abort of inflight.values()) abort.abort(new Error("shutting down"));
      await slots.idle();
    },
  };
}
