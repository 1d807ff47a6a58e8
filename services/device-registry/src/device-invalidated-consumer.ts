import { fromBinary } from "@bufbuild/protobuf";
import type { JsMsg } from "@nats-io/jetstream";
import type { Logger, NatsConnection, StreamNames } from "@herald/runtime";
import { DeviceInvalidatedSchema } from "@herald/proto/delivery";
import { RETRY_DELAY_MS, startEventsConsumer, type EventsConsumer } from "./events-consumer.js";
import { toInvalidation } from "./invalidation.js";
import type { DeviceRegistryMetrics } from "./metrics.js";
import type { DeviceStore, Invalidation } from "./device-store.js";

/** Messages per UPDATE: one statement marks a whole burst of dead tokens. */
export const INVALIDATION_BATCH = 500;

interface Deps {
  store: DeviceStore;
  metrics: DeviceRegistryMetrics;
  log: Logger;
}

/**
 * Marks the devices whose tokens a sender found dead (DeviceInvalidated protobufs). Up to
 * 500 messages are pulled at a time; whatever has arrived by the time the previous batch
 * is done becomes the next batch (at most 500, one UPDATE), so a burst costs a few
 * statements and a lone message waits for nothing. The store's rule applies: a device
 * registered again after the observation stays valid.
 */
export function startDeviceInvalidatedConsumer(
  opts: Deps & { nc: NatsConnection; names: StreamNames },
): Promise<EventsConsumer> {
  return startEventsConsumer(
    { ...opts, durable: "device-registry-invalidated", subject: opts.names.deviceInvalidated },
    // One UPDATE at a time.
    { log: opts.log, concurrency: 1, batchSize: INVALIDATION_BATCH, handleBatch: (batch) => apply(batch, opts) },
  );
}

/** One statement for the whole batch, then every ack; on failure every message comes back. */
async function apply(batch: JsMsg[], { store, metrics, log }: Deps): Promise<void> {
  const usable: JsMsg[] = [];
  const invalidations: Invalidation[] = [];
  for (const m of batch) {
    const invalidation = decode(m, log);
    if (!invalidation) continue;
    usable.push(m);
    invalidations.push(invalidation);
  }
  if (invalidations.length === 0) return;
  try {
    const invalidated = await store.invalidate(invalidations);
    for (const m of usable) m.ack();
    metrics.invalidations.inc({ source: "event" }, invalidated);
    log.debug({ received: usable.length, invalidated }, "device.invalidated batch applied");
  } catch (err) {
    log.error({ err, received: usable.length }, "applying device.invalidated batch failed; will retry");
    for (const m of usable) m.nak(RETRY_DELAY_MS);
  }
}

/** The invalidation a message carries; a message that has none is terminated here. */
function decode(m: JsMsg, log: Logger): Invalidation | undefined {
  let problem: string;
  try {
    const checked = toInvalidation(fromBinary(DeviceInvalidatedSchema, m.data));
    if (checked.ok) return checked.invalidation;
    problem = checked.problem;
  } catch {
    problem = "not a DeviceInvalidated protobuf";
  }
  log.warn({ subject: m.subject, seq: m.seq, problem }, "unusable device.invalidated message; dropped");
  // No reason argument: nats-server 2.9 does not recognise "+TERM <reason>" and redelivers.
  m.term();
  return undefined;
}
