import { setMaxListeners } from "node:events";
import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import { jetstream, type JetStreamClient, type JsMsg } from "@nats-io/jetstream";
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
  SpanKind,
  startPullConsumer,
  trace,
  tracedPublish,
  tracer,
  type Logger,
  type NatsConnection,
  type PlatformSubject,
  type PullConsumer,
  type StreamNames,
} from "@herald/runtime";
import type { BatchProcessor, BatchResult } from "./batch-processor.js";
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

export type DeliveryConsumer = PullConsumer;

const NAK_DELAY_MS = 5_000;

type Span = ReturnType<typeof tracer.startSpan>;

/** What handling one batch needs, fixed for the consumer's life. */
interface Deps extends DeliveryConsumerOptions {
  js: JetStreamClient;
  ackWaitMs: number;
}

/**
 * The durable pull consumer every sender replica shares on `delivery.<platform>`. It
 * pulls only as many batches as it has free slots (startPullConsumer), keeps each alive
 * with working() while it is sent, publishes the outcomes (and dead-token invalidations)
 * before it acks, and on stop hands back whatever it could not finish: a batch is acked
 * only once its outcomes are stored in JetStream, so a crash loses nothing (at worst the
 * batch in flight is sent again, and its duplicate outcomes are dropped downstream).
 */
export async function startDeliveryConsumer(opts: DeliveryConsumerOptions): Promise<DeliveryConsumer> {
  const { nc, names, platform, log } = opts;
  const ackWaitMs = opts.ackWaitMs ?? 60_000;
  await ensureStream(nc, deliveryStreamConfig(names), log);
  await ensureStream(nc, outcomesStreamConfig(names), log);
  await ensureStream(nc, eventsStreamConfig(names), log);
  const deps: Deps = { ...opts, js: jetstream(nc), ackWaitMs };
  return startPullConsumer(
    nc,
    {
      stream: names.deliveryStream,
      durable: names.consumer(`sender-${platform}`),
      filterSubject: names.delivery(platform),
      ackWaitMs,
      maxAckPending: 10_000,
    },
    {
      log,
      concurrency: opts.concurrentBatches,
      drainMs: opts.drainMs,
      handle: (m, signal) => handleDelivery(m, signal, deps),
    },
  );
}

/** One delivery message: decoded, sent, its results stored, then acked; handed back on failure. */
async function handleDelivery(m: JsMsg, signal: AbortSignal, deps: Deps): Promise<void> {
  // Every send of the batch listens on this signal.
  setMaxListeners(0, signal);
  const heartbeat = setInterval(() => m.working(), Math.max(1_000, deps.ackWaitMs / 3));
  const t0 = Date.now();
  const span = startConsumerSpan(m, deps.platform);
  const spanContext = trace.setSpan(context.active(), span);
  try {
    const batch = decodeBatch(m, deps.log);
    if (!batch) return;
    annotateSpan(span, batch);
    const result = await context.with(spanContext, () => deps.processor.process(batch, signal));
    await context.with(spanContext, () => storeResults(batch, result, signal, deps));
    m.ack();
    deps.onBatch?.(batch, Date.now() - t0, result.outcomes);
  } catch (err) {
    handBack(m, err, signal, deps.log);
    failSpan(span, err);
  } finally {
    span.end();
    clearInterval(heartbeat);
  }
}

/** The consumer span continues the producer's trace (the campaign's fan-out). */
function startConsumerSpan(m: JsMsg, platform: PlatformSubject): Span {
  return tracer.startSpan(
    `process delivery.${platform}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { "messaging.system": "nats", "messaging.destination.name": m.subject, [ATTR.platform]: platform },
    },
    contextFromHeaders(m.headers),
  );
}

function annotateSpan(span: Span, batch: DeliveryBatch): void {
  span.setAttributes({
    [ATTR.campaignId]: batch.campaignId,
    [ATTR.appId]: batch.appId,
    [ATTR.batchSize]: batch.targets.length,
    [ATTR.batchSequence]: Number(batch.sequence),
  });
}

/** The batch a message carries; undefined (and the message terminated) when it cannot be read. */
function decodeBatch(m: JsMsg, log: Logger): DeliveryBatch | undefined {
  try {
    return fromBinary(DeliveryBatchSchema, m.data);
  } catch (err) {
    log.error({ err, seq: m.seq }, "undecodable delivery batch dropped");
    // No reason argument: nats-server 2.9 ignores a term that carries one.
    m.term();
    return undefined;
  }
}

/**
 * The notifications are with the providers now: what follows is only stored, again and
 * again if it must (publishUntilStored), rather than the batch sent twice. Invalidations
 * first, then the outcome batch.
 */
async function storeResults(batch: DeliveryBatch, result: BatchResult, signal: AbortSignal, deps: Deps) {
  const store = { policy: storePolicy(deps.ackWaitMs), signal, log: deps.log };
  await Promise.all(
    result.invalidations.map((inv) =>
      publishStored(deps.js, "device.invalidated", deps.names.deviceInvalidated, {
        attributes: { [ATTR.appId]: inv.appId },
        body: toBinary(DeviceInvalidatedSchema, inv),
        msgID: `inv.${inv.deviceId}.${batch.campaignId}`,
        store: { ...store, what: "device invalidation" },
      }),
    ),
  );
  const outcomes = create(OutcomeBatchSchema, {
    campaignId: batch.campaignId,
    sequence: batch.sequence,
    platform: batch.platform,
    outcomes: result.outcomes,
  });
  await publishStored(deps.js, "outcome", deps.names.outcome(batch.campaignId), {
    attributes: { [ATTR.campaignId]: batch.campaignId, [ATTR.batchSize]: outcomes.outcomes.length },
    body: toBinary(OutcomeBatchSchema, outcomes),
    msgID: `${batch.campaignId}.${deps.platform}.${batch.sequence}`,
    store: { ...store, what: "outcome batch" },
  });
}

/** One traced, de-duplicated publish, repeated until the stream has it. */
function publishStored(
  js: JetStreamClient,
  kind: string,
  subject: string,
  msg: {
    attributes: Parameters<typeof tracedPublish>[2];
    body: Uint8Array;
    msgID: string;
    store: Parameters<typeof publishUntilStored>[1];
  },
) {
  const headers = natsHeaders();
  return publishUntilStored(
    () =>
      tracedPublish(kind, subject, msg.attributes, headers, () =>
        js.publish(subject, msg.body, { msgID: msg.msgID, headers }),
      ),
    msg.store,
  );
}

/** Nak: at once when the consumer is stopping (another replica takes it), after a pause on a failure. */
function handBack(m: JsMsg, err: unknown, signal: AbortSignal, log: Logger): void {
  if (signal.aborted) log.info({ seq: m.seq }, "batch handed back on shutdown");
  else log.warn({ err, seq: m.seq }, "batch failed; redelivering later");
  m.nak(signal.aborted ? 0 : NAK_DELAY_MS);
}
