import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { jetstreamManager, type JetStreamManager, type StreamInfo } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { streamNames, type StreamNames } from "@herald/runtime";
import type { Fault } from "../support/chaos/faults.js";
import { createChaosFleet, SIM_PLATFORMS, type ChaosFleet } from "../support/chaos/fleet.js";
import { ChaosObserver } from "../support/chaos/observer.js";
import { renderTable } from "../support/chaos/report.js";
import { closeChaosRun, expectExactCampaign, runFaultOrDump, type FaultResult } from "../support/chaos/run-fault.js";
import { startPrivateInfra, type NatsNode, type PrivateInfra } from "../support/private-infra.js";
import { startStack, type Stack } from "../support/stack.js";
import { poll, waitForValue } from "../support/wait.js";

// Herald on a three-server NATS cluster (the machine's nats-server, routes and JetStream
// stores of its own on loopback: test/support/private-infra.ts), every stream at R3
// (NATS_STREAM_REPLICAS=3), every process given the three URLs. During one mixed campaign
// (iOS, Android, web): kill -9 of the server that leads the DELIVERY stream (found through
// the JetStream API: stream info's cluster.leader), measured until a new leader is elected
// and pushes move again on every platform while it stays down; then it comes back, and
// the three servers are restarted one at a time, each waited for until its /healthz says
// it has caught up, as a rolling upgrade of the official chart does. The chaos suite's
// harness (test/support/chaos/) sends the campaign and counts per device what the provider
// simulator got: exact stats, every device exactly one outcome, none lost, duplicates
// within the bound.
//
// Short profile (inside `npm test`): 3,000 devices. Long (`npm run chaos`, which sets
// HERALD_CHAOS_PROFILE=long): 20,000 devices, and the figures written next to the chaos
// report. The simulator answers every push after LATENCY_MS and each sender keeps few
// pushes in flight, so that delivery lasts through the whole rolling restart.
const LONG = process.env.HERALD_CHAOS_PROFILE === "long";
const DEVICES = Number(process.env.HERALD_NATS_CLUSTER_DEVICES || (LONG ? 20_000 : 3_000));
const BATCH = 100;
const LATENCY_MS = 50;
const IN_FLIGHT = LONG ? 24 : 4;
const FAULT_TIMEOUT_MS = LONG ? 600_000 : 150_000;
const REPORT = process.env.HERALD_CHAOS_REPORT?.replace(/(\.md)?$/, "-nats-cluster.md");
const SENDER_ENV = {
  SENDER_CONCURRENT_BATCHES: "1",
  SENDER_ACK_WAIT_MS: "10000",
  SENDER_MAX_IN_FLIGHT: String(IN_FLIGHT),
};

let infra: PrivateInfra;
let stack: Stack;
let sim: SimAdminClient;
let fleet: ChaosFleet;
let observer: ChaosObserver;
let names: StreamNames;
let admin: NatsConnection;
let jsm: JetStreamManager;
const startedAt = Date.now();

/** What the fault measured, for the report. */
const figures = {
  killed: "",
  /** kill -9 → a stream info from a survivor names another DELIVERY leader. */
  leaderMs: 0,
  /** kill -9 → the simulator accepted pushes again on every platform, the server still down. */
  recoveryMs: 0,
  /** Each server's graceful stop, start and catch-up (its /healthz answering 200). */
  rolling: [] as { node: string; ms: number }[],
};
let result: FaultResult | undefined;

/** Stream info through any server that answers; undefined meanwhile (an election, a restart). */
const streamInfo = (stream: string): Promise<StreamInfo | undefined> => jsm.streams.info(stream).catch(() => undefined);

const nodeNamed = (name: string | undefined): NatsNode | undefined => infra.natsNodes.find((n) => n.name === name);

beforeAll(async () => {
  infra = await startPrivateInfra({ natsServers: 3 });
  stack = await startStack(infra.urls, {
    env: { LOG_LEVEL: "info", NATS_STREAM_REPLICAS: "3" },
    envFor: {
      campaign: { FANOUT_BATCH_SIZE: String(BATCH), FANOUT_LEASE_MS: "5000" },
      "sender-apns": SENDER_ENV,
      "sender-fcm": SENDER_ENV,
      "sender-webpush": SENDER_ENV,
      "provider-sim": { SIM_SEED: "20261207" },
    },
  });
  sim = new SimAdminClient(stack.simAdminUrl);
  fleet = await createChaosFleet({ stack, sim, databaseUrl: infra.urls.databaseUrl, devices: DEVICES });
  for (const p of SIM_PLATFORMS) await sim.setFaults(p, { latency_ms: LATENCY_MS });
  const namespace = stack.process("campaign").env.NATS_NAMESPACE!;
  names = streamNames(namespace);
  observer = new ChaosObserver(infra.urls.databaseUrl, stack.schemas.campaign!, sim, infra.urls.natsUrl, namespace);
  admin = await connect({ servers: infra.urls.natsUrl.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  jsm = await jetstreamManager(admin, { timeout: 2_000 });
}, 600_000);

afterAll(async () => {
  if (result) {
    const lines = [
      `nats cluster (${LONG ? "long" : "short"} profile, ${DEVICES} devices, R3):`,
      renderTable([result]),
      `DELIVERY leader ${figures.killed} killed: new leader after ${figures.leaderMs} ms, pushes moving again on every platform after ${figures.recoveryMs} ms (server still down)`,
      `rolling restart: ${figures.rolling.map((r) => `${r.node} ${(r.ms / 1000).toFixed(1)} s`).join(", ")}`,
    ];
    console.log(lines.join("\n"));
    if (REPORT) {
      mkdirSync(path.dirname(REPORT), { recursive: true });
      writeFileSync(
        REPORT,
        `## NATS cluster: ${LONG ? "long" : "short"} profile, ${new Date().toISOString().slice(0, 10)}\n\n` +
          `${os.cpus().length} cores, Node ${process.version}; the whole file took ` +
          `${((Date.now() - startedAt) / 60_000).toFixed(1)} min. Settings: FANOUT_BATCH_SIZE=${BATCH}; ` +
          `${Object.entries(SENDER_ENV)
            .map(([k, v]) => `${k}=${v}`)
            .join(
              "; ",
            )}; simulator latency ${LATENCY_MS} ms; NATS_STREAM_REPLICAS=3.\n\n${lines.slice(1).join("\n\n")}\n`,
      );
    }
  }
  await admin?.close().catch(() => undefined);
  await closeChaosRun({ observer, stack, infra });
}, 120_000);

/**
 * kill -9 of the DELIVERY leader, kept down until delivery has recovered without it; its
 * restart; then each server in turn stopped and started as a rolling upgrade does.
 */
const leaderKillThenRollingRestart: Fault = {
  id: "nats-cluster",
  title: "kill -9 the DELIVERY leader, then a rolling restart of the three NATS servers",
  short: true,
  trigger: { kind: "delivered", platforms: [...SIM_PLATFORMS], fraction: 0.2 },
  // One in-flight batch per sender may lose its outcome publish or its ack (as in the
  // chaos suite's NATS restart) at each of the four disruptions: the kill and the three
  // restarts.
  redeliveredBatches: 3 * 4,
  resume: [{ kind: "deliveries", platforms: [...SIM_PLATFORMS] }, { kind: "outcomes" }],
  inject: async ({ completed }) => {
    const leader = nodeNamed((await streamInfo(names.deliveryStream))?.cluster?.leader);
    if (!leader) throw new Error("no DELIVERY leader among the cluster's servers");
    figures.killed = leader.name;
    const before = await Promise.all(SIM_PLATFORMS.map((p) => observer.accepted([p])));
    const faultAt = Date.now();
    await leader.crash();

    const elected = await poll(
      () => streamInfo(names.deliveryStream),
      (i) => !!i?.cluster?.leader && i.cluster.leader !== leader.name,
      60_000,
      50,
    );
    if (!elected.held) throw new Error(`no new DELIVERY leader: ${JSON.stringify(elected.value?.cluster)}`);
    figures.leaderMs = Date.now() - faultAt;
    await waitForValue(
      "pushes accepted again on every platform with the leader down",
      async () => ({
        now: await Promise.all(SIM_PLATFORMS.map((p) => observer.accepted([p]))),
        done: await completed(),
      }),
      ({ now, done }) => done || now.every((n, i) => (n ?? 0) > (before[i] ?? 0)),
      { timeoutMs: 60_000, everyMs: 50 },
    );
    figures.recoveryMs = Date.now() - faultAt;

    await leader.start();
    for (const node of infra.natsNodes) {
      const t = Date.now();
      await node.stop();
      await node.start();
      figures.rolling.push({ node: node.name, ms: Date.now() - t });
    }
    return { faultAt, repairedAt: Date.now() };
  },
};

describe(`Herald on a three-server NATS cluster, a mixed campaign to ${DEVICES.toLocaleString("en")} devices`, () => {
  it("creates every stream at R3, and every durable consumer on three servers", async () => {
    for (const stream of [names.eventsStream, names.deliveryStream, names.outcomesStream, names.webhooksStream]) {
      const info = await waitForValue(
        `${stream} at R3, every replica current`,
        () => streamInfo(stream),
        (i) => (i?.cluster?.replicas ?? []).filter((r) => r.current).length === 2,
        { timeoutMs: 30_000, everyMs: 200 },
      );
      expect(info?.config.num_replicas, stream).toBe(3);
      for await (const c of jsm.consumers.list(stream)) {
        expect(c.cluster?.replicas?.length, `${stream} ${c.name}`).toBe(2);
      }
    }
  });

  it(
    leaderKillThenRollingRestart.title,
    async () => {
      const r = await runFaultOrDump(
        leaderKillThenRollingRestart,
        { stack, infra, sim, fleet, observer, batchSize: BATCH, timeoutMs: FAULT_TIMEOUT_MS },
        () => `figures: ${JSON.stringify(figures)}`,
      );
      result = r;
      expect(figures.rolling.map((x) => x.node)).toEqual(infra.natsNodes.map((n) => n.name));
      expectExactCampaign(r, DEVICES);
      // Still three current replicas of every stream after the restarts.
      for (const stream of [names.deliveryStream, names.outcomesStream]) {
        const info = await streamInfo(stream);
        expect(info?.cluster?.replicas?.filter((x) => x.current).length, stream).toBe(2);
      }
    },
    FAULT_TIMEOUT_MS + 120_000,
  );
});
