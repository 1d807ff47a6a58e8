import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { jetstream, jetstreamManager, type JetStreamManager, type StreamInfo } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogCapture } from "../../../test/support/log-capture.js";
import { natsCluster, type NatsCluster } from "../../../test/support/private-infra.js";
import { uniqueName } from "../../../test/support/unique.js";
import { waitForValue } from "../../../test/support/wait.js";
import { ensureConsumer } from "../src/consumer.js";
import { createLogger } from "../src/logger.js";
import { connectNats, ensureStream, type NatsConnection } from "../src/nats.js";
import { deliveryStreamConfig, streamNames } from "../src/streams.js";

// Replicated streams against a real three-server JetStream cluster on loopback (the
// machine's nats-server, test/support/private-infra.ts): an R1 stream of an existing
// install scaled to R3 by ensureStream, its durable consumer following, a scale-up the
// cluster cannot hold refused with a warning, placement tags, and the client given every
// server reconnecting to a survivor.
const dir = mkdtempSync(path.join(os.tmpdir(), "herald-nats-cluster-"));
const logs = new LogCapture();
const log = createLogger("replication-test", "info", logs);
let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  cluster = await natsCluster(dir, 3);
  await cluster.server.start();
  await cluster.ready();
  nc = await connectNats(cluster.url, "replication-test", log);
  jsm = await jetstreamManager(nc);
}, 90_000);

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  await cluster?.server.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const replicated = (namespace: string, replicas: number, placementTags: string[] = []) =>
  streamNames(namespace, { replicas, placementTags });

/** Stream info once every replica is current (the leader plus replicas - 1 followers). */
const caughtUp = (name: string, replicas: number) =>
  waitForValue(
    `${name} at R${replicas}, every replica current`,
    () => jsm.streams.info(name),
    (i: StreamInfo) =>
      i.config.num_replicas === replicas &&
      !!i.cluster?.leader &&
      (i.cluster.replicas ?? []).length === replicas - 1 &&
      (i.cluster.replicas ?? []).every((r) => r.current),
    { timeoutMs: 30_000, everyMs: 200 },
  );

describe("stream replication on a three-server cluster", () => {
  it("scales an existing R1 stream and its durable consumer to R3 on upgrade, logging it", async () => {
    const ns = uniqueName("repl");
    const before = replicated(ns, 1);
    const config = deliveryStreamConfig(before);
    await ensureStream(nc, config, log);
    const durable = before.consumer("sender-web");
    await ensureConsumer(jsm, {
      stream: config.name,
      durable,
      filterSubject: before.delivery("web"),
      ackWaitMs: 30_000,
    });
    const js = jetstream(nc);
    for (let i = 0; i < 10; i++) await js.publish(before.delivery("web"), `m${i}`, { msgID: `m${i}` });
    expect((await jsm.streams.info(config.name)).config.num_replicas).toBe(1);

    // The upgrade: the same stream, configured for three replicas.
    const mark = logs.lines.length;
    await ensureStream(nc, deliveryStreamConfig(replicated(ns, 3)), log);
    const info = await caughtUp(config.name, 3);
    expect(info.state.messages).toBe(10);
    expect(info.config.duplicate_window).toBe(config.duplicate_window);
    const line = JSON.parse(logs.since(mark).trim().split("\n").at(-1)!);
    expect(line).toMatchObject({
      level: "info",
      msg: "stream replication changed",
      stream: config.name,
      from: { replicas: 1 },
      to: { replicas: 3 },
    });
    // The durable had no replica count of its own: the server moved it to the stream's three.
    const consumer = await waitForValue(
      "the durable consumer on three servers",
      () => jsm.consumers.info(config.name, durable),
      (c) => (c.cluster?.replicas ?? []).length === 2,
      { timeoutMs: 30_000, everyMs: 200 },
    );
    expect(consumer.num_pending).toBe(10);

    // Started again with the same setting: nothing to change, nothing logged.
    const again = logs.lines.length;
    await ensureStream(nc, deliveryStreamConfig(replicated(ns, 3)), log);
    expect(logs.since(again)).toBe("");
    await jsm.streams.delete(config.name);
  });

  it("keeps the stream running as it is, with a warning and the reason, when the cluster cannot hold the replicas", async () => {
    const ns = uniqueName("repl");
    const config = deliveryStreamConfig(replicated(ns, 1));
    await ensureStream(nc, config, log);
    const mark = logs.lines.length;
    await ensureStream(nc, deliveryStreamConfig(replicated(ns, 5)), log);
    const line = JSON.parse(logs.since(mark).trim().split("\n").at(-1)!);
    expect(line).toMatchObject({
      level: "warn",
      msg: "stream replication not changed: the stream keeps running as it is",
      from: { replicas: 1 },
      to: { replicas: 5 },
    });
    expect(line.reason).toMatch(/no suitable peers|insufficient resources/i);
    expect((await jsm.streams.info(config.name)).config.num_replicas).toBe(1);
    await jetstream(nc).publish(`${ns}.delivery.ios`, "still works");

    // Fewer replicas configured than the stream has: kept (scaled down only by hand).
    await ensureStream(nc, deliveryStreamConfig(replicated(ns, 3)), log);
    await caughtUp(config.name, 3);
    const down = logs.lines.length;
    await ensureStream(nc, deliveryStreamConfig(replicated(ns, 1)), log);
    expect((await jsm.streams.info(config.name)).config.num_replicas).toBe(3);
    expect(logs.since(down)).toContain("stream keeps more replicas than configured");
    await jsm.streams.delete(config.name);
  });

  it("places the replicas on the servers with the placement tags", async () => {
    const ns = uniqueName("repl");
    const config = deliveryStreamConfig(replicated(ns, 1, ["node:2"]));
    await ensureStream(nc, config, log);
    const info = await jsm.streams.info(config.name);
    expect(info.config.placement?.tags).toEqual(["node:2"]);
    expect(info.cluster?.leader).toBe("nats-2");
    await jsm.streams.delete(config.name);
  });

  it("reconnects to a surviving server when the one it uses is killed, and an R3 stream goes on", async () => {
    const ns = uniqueName("repl");
    const config = deliveryStreamConfig(replicated(ns, 3));
    await ensureStream(nc, config, log);
    await caughtUp(config.name, 3);
    const client = await connectNats(cluster.url, "survivor-test", log);
    try {
      const used = cluster.nodes.find((n) => n.url.endsWith(`:${client.info!.port}`))!;
      await used.crash();
      const js = jetstream(client, { timeout: 2_000 });
      // The first publishes may fall into the reconnection or a leader election.
      const ack = await waitForValue(
        "a publish acknowledged through a survivor",
        () => js.publish(`${ns}.delivery.web`, "after the kill", { msgID: "after" }).catch(() => undefined),
        (a) => a !== undefined,
        { timeoutMs: 30_000, everyMs: 200, show: () => "no ack" },
      );
      expect(ack!.stream).toBe(config.name);
      // Published once, whatever the retries (the same message id within the duplicate window).
      expect((await jsm.streams.info(config.name)).state.messages).toBe(1);
      expect(client.info!.port).not.toBe(Number(new URL(used.url).port));
      await used.start();
      await caughtUp(config.name, 3);
    } finally {
      await client.close();
    }
    await jsm.streams.delete(config.name);
  });
});
