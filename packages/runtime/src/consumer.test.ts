import type { JsMsg } from "@nats-io/jetstream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { consumerConfig, runPullLoop, WorkCounter, type Fetcher, type PullHandler } from "./consumer.js";

const log = pino({ level: "silent" });

/** Each kind of handler, without the logger run() adds. */
type WithoutLog<H> = H extends unknown ? Omit<H, "log"> : never;
const run = (fetcher: Fetcher, handler: WithoutLog<PullHandler>) =>
  runPullLoop(fetcher, { name: "test", log, ...handler });

interface FakeMsg {
  seq: number;
  acked: boolean;
  nakDelay: number | undefined;
  ack(): void;
  nak(delay?: number): void;
}

function fakeMsg(seq: number): FakeMsg {
  return {
    seq,
    acked: false,
    nakDelay: undefined,
    ack() {
      this.acked = true;
    },
    nak(delay?: number) {
      this.nakDelay = delay ?? 0;
    },
  };
}

/** A stream of `total` messages; each fetch hands out up to max_messages of what is left, then ends. */
function fakeStream(total: number) {
  const messages = Array.from({ length: total }, (_, i) => fakeMsg(i + 1));
  let next = 0;
  const asked: number[] = [];
  const fetcher: Fetcher = {
    async fetch({ max_messages }) {
      asked.push(max_messages);
      const batch = messages.slice(next, next + max_messages);
      next += batch.length;
      if (batch.length === 0) await new Promise((r) => setTimeout(r, 5));
      return (async function* () {
        for (const m of batch) yield m as unknown as JsMsg;
      })();
    },
  };
  return { messages, fetcher, asked };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("runPullLoop", () => {
  it("never has more than `concurrency` messages in work, and asks only for free places", async () => {
    const { messages, fetcher, asked } = fakeStream(20);
    let inWork = 0;
    let most = 0;
    const consumer = run(fetcher, {
      concurrency: 3,
      handle: async (m) => {
        most = Math.max(most, ++inWork);
        await new Promise((r) => setTimeout(r, 2));
        inWork--;
        m.ack();
      },
    });
    await vi.waitFor(() => expect(messages.every((m) => m.acked)).toBe(true));
    await consumer.stop();
    expect(most).toBe(3);
    expect(Math.max(...asked)).toBeLessThanOrEqual(3);
  });

  it("hands batches of what has arrived, one call at a time with concurrency 1", async () => {
    const { messages, fetcher } = fakeStream(25);
    const sizes: number[] = [];
    let running = 0;
    let overlap = false;
    const consumer = run(fetcher, {
      concurrency: 1,
      batchSize: 10,
      handleBatch: async (batch) => {
        if (++running > 1) overlap = true;
        sizes.push(batch.length);
        await new Promise((r) => setTimeout(r, 1));
        for (const m of batch) m.ack();
        running--;
      },
    });
    await vi.waitFor(() => expect(messages.every((m) => m.acked)).toBe(true));
    await consumer.stop();
    expect(overlap).toBe(false);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(25);
  });

  it("stop() resolves only once the running handler has returned, without aborting it within the drain time", async () => {
    const { messages, fetcher } = fakeStream(1);
    const started = deferred();
    const release = deferred();
    let signal: AbortSignal | undefined;
    const consumer = run(fetcher, {
      concurrency: 2,
      drainMs: 10_000,
      handle: async (m, s) => {
        signal = s;
        started.resolve();
        await release.promise;
        m.ack();
      },
    });
    await started.promise;
    let stopped = false;
    const stopping = consumer.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(messages[0]!.acked).toBe(true);
    expect(signal?.aborted).toBe(false);
  });

  it("aborts the handlers still running when the drain time is over, and still awaits them", async () => {
    const { messages, fetcher } = fakeStream(2);
    const started: Promise<void>[] = [];
    const starts = [deferred(), deferred()];
    for (const d of starts) started.push(d.promise);
    let calls = 0;
    let finished = 0;
    const consumer = run(fetcher, {
      concurrency: 2,
      drainMs: 20,
      handle: async (m, signal) => {
        starts[calls++]!.resolve();
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        // Cleaning up after the abort still counts as work in progress.
        await new Promise((r) => setTimeout(r, 10));
        finished++;
        m.nak(0);
      },
    });
    await Promise.all(started);
    await consumer.stop();
    expect(finished).toBe(2);
    expect(messages.map((m) => m.nakDelay)).toEqual([0, 0]);
  });

  it("naks at once the messages of a handler that throws", async () => {
    const { messages, fetcher } = fakeStream(1);
    const consumer = run(fetcher, {
      concurrency: 1,
      handle: async () => {
        throw new Error("boom");
      },
    });
    await vi.waitFor(() => expect(messages[0]!.nakDelay).toBe(0));
    await consumer.stop();
  });

  it("hands back what a fetch still brings after stop()", async () => {
    const arrived = deferred();
    const fetching = deferred();
    const late = fakeMsg(1);
    const fetcher: Fetcher = {
      async fetch() {
        fetching.resolve();
        return (async function* () {
          await arrived.promise;
          yield late as unknown as JsMsg;
        })();
      },
    };
    const handle = vi.fn(async () => undefined);
    const consumer = run(fetcher, { concurrency: 1, handle });
    await fetching.promise;
    const stopping = consumer.stop();
    arrived.resolve();
    await stopping;
    expect(handle).not.toHaveBeenCalled();
    expect(late.nakDelay).toBe(0);
  });

  it("retries a failed fetch", async () => {
    let fetches = 0;
    const m = fakeMsg(1);
    const fetcher: Fetcher = {
      async fetch() {
        if (++fetches === 1) throw new Error("409 server shutdown");
        return (async function* () {
          if (fetches === 2) yield m as unknown as JsMsg;
          else await new Promise((r) => setTimeout(r, 5));
        })();
      },
    };
    const consumer = run(fetcher, { concurrency: 1, handle: async (msg) => msg.ack() });
    await vi.waitFor(() => expect(m.acked).toBe(true), { timeout: 3_000 });
    await consumer.stop();
  });
});

describe("WorkCounter", () => {
  it("idle() settles when the last place is given back", async () => {
    const work = new WorkCounter(2);
    work.take();
    work.take();
    let idle = false;
    const waiting = work.idle().then(() => (idle = true));
    let free = false;
    const freeing = work.free().then(() => (free = true));
    await Promise.resolve();
    expect([idle, free]).toEqual([false, false]);
    work.release();
    await freeing;
    expect([idle, free]).toEqual([false, true]);
    work.release();
    await waiting;
    expect(idle).toBe(true);
  });
});

describe("consumerConfig", () => {
  it("writes durations in milliseconds and converts them to nanoseconds", () => {
    expect(
      consumerConfig({ stream: "S", durable: "d", filterSubject: "a.b", ackWaitMs: 30_000, maxAckPending: 10 }),
    ).toMatchObject({ durable_name: "d", filter_subject: "a.b", ack_wait: 30_000_000_000, max_ack_pending: 10 });
  });

  it("leaves the replicas to the stream's unless the spec sets them", () => {
    const spec = { stream: "S", durable: "d", filterSubject: "a.b", ackWaitMs: 30_000 };
    expect(consumerConfig(spec)).not.toHaveProperty("num_replicas");
    expect(consumerConfig({ ...spec, replicas: 3 })).toMatchObject({ num_replicas: 3 });
  });
});
