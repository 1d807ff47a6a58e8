import { jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, nanos, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { uniqueName } from "../../../test/support/unique.js";
import { ensureConsumer, startPullConsumer, type DurableConsumerSpec } from "../src/consumer.js";

const log = pino({ level: "silent" });
const namespace = uniqueName("rt");
const stream = `${namespace}_WORK`;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  nc = await connect({ servers: inject("infra").natsUrl.split(",") });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${namespace}.>`] });
});

afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => undefined);
  await nc?.close();
});

const spec = (durable: string, subject: string, more: Partial<DurableConsumerSpec> = {}): DurableConsumerSpec => ({
  stream,
  durable: `${namespace}_${durable}`,
  filterSubject: `${namespace}.${subject}`,
  ackWaitMs: 30_000,
  ...more,
});

describe("ensureConsumer", () => {
  it("creates the durable consumer, and applies a changed config to the existing one", async () => {
    const first = spec("upgrade", "a");
    expect(await ensureConsumer(jsm, first)).toEqual([]);
    let info = await jsm.consumers.info(stream, first.durable);
    expect(info.config.ack_wait).toBe(nanos(30_000));
    expect(info.config.filter_subject).toBe(`${namespace}.a`);

    // The same config again (a restart, a second replica): nothing to change.
    expect(await ensureConsumer(jsm, first)).toEqual([]);

    // A release with other settings: applied on start.
    const next = spec("upgrade", "a", { ackWaitMs: 45_000, maxAckPending: 7 });
    expect(await ensureConsumer(jsm, next)).toEqual(["ack_wait", "max_ack_pending"]);
    info = await jsm.consumers.info(stream, first.durable);
    expect(info.config.ack_wait).toBe(nanos(45_000));
    expect(info.config.max_ack_pending).toBe(7);
  });
});

describe("startPullConsumer", () => {
  it("handles every message with at most `concurrency` in work", async () => {
    const s = spec("bounded", "bounded");
    const js = jetstream(nc);
    for (let i = 0; i < 12; i++) await js.publish(s.filterSubject, `${i}`);
    const seen = new Set<string>();
    let inWork = 0;
    let most = 0;
    const consumer = await startPullConsumer(nc, s, {
      log,
      concurrency: 3,
      handle: async (m) => {
        most = Math.max(most, ++inWork);
        await new Promise((r) => setTimeout(r, 20));
        inWork--;
        seen.add(m.string());
        m.ack();
      },
    });
    try {
      await vi.waitFor(() => expect(seen.size).toBe(12), { timeout: 10_000 });
    } finally {
      await consumer.stop();
    }
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(3);
  });

  it("stop() awaits the handler in progress, whose ack then reaches the server", async () => {
    const s = spec("drain", "drain");
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const consumer = await startPullConsumer(nc, s, {
      log,
      concurrency: 1,
      handle: async (m) => {
        started();
        await released;
        await m.ackAck();
        order.push("acked");
      },
    });
    await jetstream(nc).publish(s.filterSubject, "slow");
    await running;
    // The handler is released as soon as stop() is called; stop() must still resolve only
    // after the handler has acked (a stop that did not await it resolves first).
    const stopping = consumer.stop().then(() => order.push("stopped"));
    release();
    await stopping;
    expect(order).toEqual(["acked", "stopped"]);
    const info = await jsm.consumers.info(stream, s.durable);
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
  });
});
