import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type ConsumerConfig,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { PULL_EXPIRES_MS, retryJetStreamApi } from "./nats.js";
import { readyBatches } from "./ready-batches.js";

/**
 * A durable, explicitly acked pull consumer's settings. Every duration is in
 * milliseconds; the one conversion to the nanoseconds JetStream stores is in
 * consumerConfig().
 */
export interface DurableConsumerSpec {
  stream: string;
  /** The full durable name (namespace prefix included: StreamNames.consumer()). */
  durable: string;
  filterSubject: string;
  /** How long a message may go without an ack or a working() before it is redelivered. */
  ackWaitMs: number;
  /** Unacked messages the server lets out at once, over every replica; its default when unset. */
  maxAckPending?: number;
  /**
   * Replicas of the consumer's state. Unset: the stream's (NATS_STREAM_REPLICAS), which the
   * server also applies to the durable when the stream is scaled (ensureStream).
   */
  replicas?: number;
}

/** The JetStream config of a spec: deliver everything, explicit acks, redeliver without limit. */
export function consumerConfig(spec: DurableConsumerSpec): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: spec.durable,
    filter_subject: spec.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: -1,
    ...(spec.maxAckPending === undefined ? {} : { max_ack_pending: spec.maxAckPending }),
    ...(spec.replicas === undefined ? {} : { num_replicas: spec.replicas }),
  };
}

/** Fields the server lets an existing consumer change, compared to decide on an update. */
const UPDATABLE = ["filter_subject", "ack_wait", "max_deliver", "max_ack_pending", "num_replicas"] as const;

/**
 * Creates the durable consumer, or brings an existing one to the spec: a release that
 * changes a consumer's settings has them applied when it starts, not only on a fresh
 * install. Returns the fields that were changed (none when created or already right).
 */
export async function ensureConsumer(
  jsm: JetStreamManager,
  spec: DurableConsumerSpec,
  log?: Logger,
): Promise<string[]> {
  const wanted = consumerConfig(spec);
  // Timeouts are repeated (retryJetStreamApi): on a cluster, creating a consumer waits for its replicas' election.
  const retry = <T>(what: string, call: () => Promise<T>) =>
    retryJetStreamApi(call, { what: `${what} ${spec.durable}`, log });
  const current = await retry("consumer info", () =>
    jsm.consumers.info(spec.stream, spec.durable).then(
      (info): Partial<ConsumerConfig> | undefined => info.config,
      (err: unknown) => {
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
        throw err;
      },
    ),
  );
  if (!current) {
    // Replicas starting together may both add it; the server accepts an identical config twice.
    await retry("consumer create", () => jsm.consumers.add(spec.stream, wanted));
    return [];
  }
  const changed = UPDATABLE.filter((k) => wanted[k] !== undefined && wanted[k] !== current[k]);
  if (changed.length > 0) {
    await retry("consumer update", () =>
      jsm.consumers.update(spec.stream, spec.durable, Object.fromEntries(changed.map((k) => [k, wanted[k]]))),
    );
  }
  return changed;
}

/** What the loop needs of a JetStream consumer (a fake in unit tests). */
export interface Fetcher {
  fetch(opts: { max_messages: number; expires: number }): Promise<AsyncIterable<JsMsg>>;
}

interface LoopCommon {
  log: Logger;
  /** Handler calls in progress at once. */
  concurrency: number;
  /**
   * On stop, how long running handlers may take before their signal aborts (they are
   * awaited either way: stop() resolves when the last one has returned).
   */
  drainMs?: number;
  /**
   * How long one fetch waits for messages (default PULL_EXPIRES_MS). It bounds how long
   * stop() waits for the open fetch to run out: consumers that are idle most of the time
   * and must stop quickly (the registry's domain events) take 1 s, at the price of one
   * idle fetch a second.
   */
  fetchExpiresMs?: number;
}

/** One message per call: at most `concurrency` messages in work. */
export interface EachMessage extends LoopCommon {
  handle(m: JsMsg, signal: AbortSignal): Promise<void>;
}

/**
 * What has already arrived, up to `batchSize` messages, per call (readyBatches): at most
 * `concurrency` × `batchSize` messages in work.
 */
export interface MessageBatches extends LoopCommon {
  batchSize: number;
  handleBatch(messages: JsMsg[], signal: AbortSignal): Promise<void>;
}

export type PullHandler = EachMessage | MessageBatches;

export interface PullConsumer {
  /**
   * Stops pulling, lets the current fetch run out (what it still brings is handed back at
   * once: see PULL_EXPIRES_MS and fetchExpiresMs) and resolves once every running handler
   * has returned.
   */
  stop(): Promise<void>;
}

const FETCH_RETRY_MS = 1_000;
const DEFAULT_DRAIN_MS = 20_000;

/** Ensures the durable consumer (ensureConsumer) and runs the pull loop on it (runPullLoop). */
export async function startPullConsumer(
  nc: NatsConnection,
  spec: DurableConsumerSpec,
  handler: PullHandler,
): Promise<PullConsumer> {
  const changed = await ensureConsumer(await jetstreamManager(nc), spec, handler.log);
  if (changed.length > 0) handler.log.info({ consumer: spec.durable, changed }, "consumer config updated");
  const consumer = await retryJetStreamApi(() => jetstream(nc).consumers.get(spec.stream, spec.durable), {
    what: `consumer get ${spec.durable}`,
    log: handler.log,
  });
  return runPullLoop(consumer, { ...handler, name: spec.durable });
}

/**
 * Pulls only as many messages as there is room for, hands them to the handler and, on
 * stop, waits for the running calls. Acks, naks and terms are the handler's; a handler
 * that throws has its messages nak'ed at once. A failed fetch (e.g. "409 server
 * shutdown" while NATS restarts) is logged and retried, never the end of the loop.
 */
export function runPullLoop(consumer: Fetcher, handler: PullHandler & { name: string }): PullConsumer {
  const { log, name } = handler;
  const batchSize = "handleBatch" in handler ? handler.batchSize : 1;
  const call = (messages: JsMsg[], signal: AbortSignal) =>
    "handleBatch" in handler ? handler.handleBatch(messages, signal) : handler.handle(messages[0]!, signal);
  const work = new WorkCounter(handler.concurrency);
  const aborts = new Set<AbortController>();
  const stopping = new AbortController();
  const stopped = aborted(stopping.signal);

  const dispatch = (messages: JsMsg[]) => {
    const abort = new AbortController();
    aborts.add(abort);
    void call(messages, abort.signal)
      .catch((err: unknown) => {
        log.error({ err, consumer: name }, "message handler failed; messages handed back");
        for (const m of messages) m.nak(0);
      })
      .finally(() => {
        aborts.delete(abort);
        work.release();
      });
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      await Promise.race([work.free(), stopped]);
      if (stopping.signal.aborted) break;
      try {
        const fetched = await consumer.fetch({
          max_messages: work.available * batchSize,
          expires: handler.fetchExpiresMs ?? PULL_EXPIRES_MS,
        });
        const groups = batchSize === 1 ? singles(fetched) : readyBatches(fetched, batchSize);
        for await (const messages of groups) {
          await Promise.race([work.free(), stopped]);
          // Stopped meanwhile: handed back for another replica (or the next start).
          if (stopping.signal.aborted) {
            for (const m of messages) m.nak(0);
            continue;
          }
          work.take();
          dispatch(messages);
        }
      } catch (err) {
        if (stopping.signal.aborted) break;
        log.warn({ err, consumer: name }, "fetch failed; retrying");
        await Promise.race([new Promise((r) => setTimeout(r, FETCH_RETRY_MS).unref()), stopped]);
      }
    }
  })();

  return {
    async stop() {
      const deadline = Date.now() + (handler.drainMs ?? DEFAULT_DRAIN_MS);
      stopping.abort();
      await loop;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
      });
      if ((await Promise.race([work.idle(), late])) === "late") {
        log.info({ consumer: name, running: aborts.size }, "drain time over; aborting running handlers");
        for (const abort of aborts) abort.abort(new Error("shutting down"));
      }
      clearTimeout(timer);
      await work.idle();
    },
  };
}

async function* singles(messages: AsyncIterable<JsMsg>): AsyncGenerator<JsMsg[]> {
  for await (const m of messages) yield [m];
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * Handler calls in progress, bounded; free() and idle() are promises settled by the
 * release() that makes them true, so nothing polls.
 */
export class WorkCounter {
  private running = 0;
  private waiters: (() => void)[] = [];

  constructor(readonly size: number) {
    if (size < 1) throw new Error("concurrency must be at least 1");
  }

  get available(): number {
    return this.size - this.running;
  }

  get inWork(): number {
    return this.running;
  }

  /** Takes a place; only after free() said there is one. */
  take(): void {
    if (this.running >= this.size) throw new Error("no free place");
    this.running++;
  }

  release(): void {
    this.running--;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves when a place is free (without taking it). */
  async free(): Promise<void> {
    while (this.running >= this.size) await this.change();
  }

  /** Resolves when nothing is in work. */
  async idle(): Promise<void> {
    while (this.running > 0) await this.change();
  }

  private change(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
