import type { FaultInput, SimAdminClient } from "@herald/provider-sim/admin-client";
import type { PrivateInfra } from "../private-infra.js";
import type { Stack } from "../stack.js";
import { SIM_PLATFORMS, type SimPlatform } from "./fleet.js";

export interface FaultContext {
  stack: Stack;
  infra: PrivateInfra;
  sim: SimAdminClient;
  /** The campaign under fault has completed (a simulator burst need not outlast it). */
  completed(): Promise<boolean>;
}

/** When the fault repair is done (`repairedAt`), and when the fault began. */
export interface Injected {
  faultAt: number;
  repairedAt: number;
}

/**
 * What has to move again after the repair for the campaign to count as recovering:
 * pushes accepted by the simulator on some platforms, outcomes recorded by the campaign
 * service, or the REST API answering.
 */
export type ResumeSignal = { kind: "deliveries"; platforms: SimPlatform[] } | { kind: "outcomes" } | { kind: "api" };

export interface Fault {
  id: string;
  title: string;
  /** Part of the short profile (inside `npm test`); the long one runs every fault. */
  short: boolean;
  /**
   * When to strike: while fan-out publishes (the campaign service and the registry are on
   * that path), or once this share of the platforms' devices got their push.
   */
  trigger: { kind: "fanout" } | { kind: "delivered"; platforms: SimPlatform[]; fraction: number };
  /**
   * Batches that may be sent twice: a sender acks a batch only after its outcomes are in
   * JetStream, so a sender that dies, or loses NATS, mid-batch gets it again. Each sender
   * runs one batch at a time (SENDER_CONCURRENT_BATCHES=1), so the bound on devices with
   * a duplicate is this many batches.
   */
  redeliveredBatches: number;
  resume: ResumeSignal[];
  inject(ctx: FaultContext): Promise<Injected>;
}

const ALL = [...SIM_PLATFORMS];
const SENDER_OF: Record<SimPlatform, string> = {
  apns: "sender-apns",
  fcm: "sender-fcm",
  webpush: "sender-webpush",
};
/** How long a killed process stays down: a supervisor's restart delay. */
const DOWN_MS = 1_000;
/** How long a frozen server stays frozen. */
const PAUSE_MS = 6_000;
/** How long a simulator burst that faults every request lasts. */
const BURST_MS = 2_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** kill -9 of processes at once, then a restart of each with the same environment. */
function kill(names: string[]): Fault["inject"] {
  return async ({ stack }) => {
    const faultAt = Date.now();
    await Promise.all(names.map((n) => stack.kill(n)));
    await sleep(DOWN_MS);
    await Promise.all(names.map((n) => stack.restart(n)));
    return { faultAt, repairedAt: Date.now() };
  };
}

function pauseNats(ms: number): Fault["inject"] {
  return async ({ infra }) => {
    const { stoppedAt, upAt } = await infra.pause("nats", ms);
    return { faultAt: stoppedAt, repairedAt: upAt };
  };
}

function restartInfra(server: "postgres" | "nats" | "redis"): Fault["inject"] {
  return async ({ infra }) => {
    const { stoppedAt, upAt } = await infra.restart(server, { downMs: DOWN_MS });
    return { faultAt: stoppedAt, repairedAt: upAt };
  };
}

/**
 * A burst on every platform of the simulator for `ms` (or until the campaign completes),
 * then the faults are cleared. A burst of faults on every request is kept shorter than
 * what the retry policy rides out (6 attempts with at least 0.25 + 0.5 + 1 + 2 s between
 * the first five, ≥ 3.75 s): a device whose every attempt fails within the burst would
 * end `failed` by design, which is the policy working, not a lost notification.
 */
function simBurst(faults: FaultInput, ms = BURST_MS): Fault["inject"] {
  return async ({ sim, completed }) => {
    const faultAt = Date.now();
    await Promise.all(SIM_PLATFORMS.map((p, i) => sim.setFaults(p, { ...faults, seed: 7 + i })));
    while (Date.now() < faultAt + ms && !(await completed())) await sleep(100);
    await Promise.all(SIM_PLATFORMS.map((p) => sim.clearFaults(p)));
    return { faultAt, repairedAt: Date.now() };
  };
}

const killSender = (p: SimPlatform, short = false): Fault => ({
  id: `kill-${SENDER_OF[p]}`,
  title: `kill -9 ${SENDER_OF[p]}`,
  short,
  trigger: { kind: "delivered", platforms: [p], fraction: 0.25 },
  redeliveredBatches: 1,
  resume: [{ kind: "deliveries", platforms: [p] }],
  inject: kill([SENDER_OF[p]]),
});

const everywhere: ResumeSignal[] = [{ kind: "deliveries", platforms: ALL }, { kind: "outcomes" }];
const midDelivery = { kind: "delivered", platforms: ALL, fraction: 0.2 } as const;

/** No fault: the same campaign undisturbed, to compare the others' completion with. */
export const BASELINE: Fault = {
  id: "baseline",
  title: "no fault (baseline)",
  short: true,
  trigger: midDelivery,
  redeliveredBatches: 0,
  resume: [],
  inject: async () => {
    const now = Date.now();
    return { faultAt: now, repairedAt: now };
  },
};

/** Every fault, in the order the long profile injects them. */
export const FAULTS: Fault[] = [
  {
    id: "kill-campaign",
    title: "kill -9 campaign (mid fan-out)",
    short: true,
    trigger: { kind: "fanout" },
    redeliveredBatches: 0,
    resume: [{ kind: "outcomes" }],
    inject: kill(["campaign"]),
  },
  {
    id: "kill-device-registry",
    title: "kill -9 device-registry (mid fan-out)",
    short: false,
    trigger: { kind: "fanout" },
    redeliveredBatches: 0,
    resume: everywhere,
    inject: kill(["device-registry"]),
  },
  {
    id: "kill-credential",
    title: "kill -9 credential",
    short: false,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: kill(["credential"]),
  },
  {
    id: "kill-gateway",
    title: "kill -9 gateway",
    short: false,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: [{ kind: "api" }],
    inject: kill(["gateway"]),
  },
  killSender("apns"),
  killSender("fcm"),
  killSender("webpush", true),
  {
    id: "kill-two-senders",
    title: "kill -9 sender-apns + sender-fcm at once",
    short: false,
    trigger: { kind: "delivered", platforms: ["apns", "fcm"], fraction: 0.25 },
    redeliveredBatches: 2,
    resume: [{ kind: "deliveries", platforms: ["apns", "fcm"] }],
    inject: kill(["sender-apns", "sender-fcm"]),
  },
  {
    id: "restart-nats",
    title: "restart NATS (private)",
    short: true,
    trigger: midDelivery,
    // Each sender's batch in flight may lose its outcome publish or its ack.
    redeliveredBatches: 3,
    resume: everywhere,
    inject: restartInfra("nats"),
  },
  {
    id: "pause-nats",
    title: "NATS frozen for 6 s (SIGSTOP, private)",
    short: true,
    trigger: midDelivery,
    // Connections stay up, nothing answers: publishes time out (5 s) and are repeated
    // under the same id (a fetch ends on missed heartbeats only after 5 to 7.5 s of
    // silence, packages/runtime/src/nats.ts; 8 s did it once, 6 s not). Kept shorter than
    // the senders' ack wait here (10 s) less their working() interval (3.3 s), so no batch
    // is due again: a batch sent twice means a sender gave up on storing its outcomes.
    redeliveredBatches: 0,
    resume: everywhere,
    inject: pauseNats(PAUSE_MS),
  },
  {
    id: "pause-nats-long",
    title: "NATS frozen for 10 s (SIGSTOP, private)",
    short: false,
    trigger: midDelivery,
    // Long enough that every JetStream fetch open at the time ends on missed heartbeats
    // (5 to 7.5 s of silence), and that a sender's batch in flight may be due again (the
    // ack wait here is 10 s): what a consumer does after its fetch was ended for it.
    redeliveredBatches: 3,
    resume: everywhere,
    inject: pauseNats(10_000),
  },
  {
    id: "restart-postgres",
    title: "restart PostgreSQL (private)",
    short: true,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: restartInfra("postgres"),
  },
  {
    id: "restart-redis",
    title: "restart Redis (private)",
    short: true,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: restartInfra("redis"),
  },
  {
    id: "sim-drops",
    title: "simulator: every request dropped for 2.5 s",
    short: false,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: simBurst({ drop_rate: 1 }),
  },
  {
    id: "sim-503",
    title: "simulator: every request 503 for 2.5 s",
    short: false,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: simBurst({ error_rate: 1, error_status: 503 }),
  },
  {
    id: "sim-429",
    title: "simulator: every request 429 + Retry-After: 2 for 2.5 s",
    short: false,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: simBurst({ throttle_rate: 1, retry_after_s: 2 }),
  },
  {
    id: "sim-goaway",
    title: "simulator: GOAWAY after 5 % of answers for 10 s",
    short: false,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    inject: simBurst({ goaway_rate: 0.05 }, 10_000),
  },
  {
    id: "sim-mixed",
    title: "simulator: every request dropped, 503 or 429 + Retry-After: 1 (a third each), GOAWAY after 5 %, for 2.5 s",
    short: true,
    trigger: midDelivery,
    redeliveredBatches: 0,
    resume: everywhere,
    // Drawn in this order: a third dropped, half the rest 503, all that is left 429.
    inject: simBurst({ drop_rate: 1 / 3, error_rate: 0.5, error_status: 503, throttle_rate: 1, goaway_rate: 0.05 }),
  },
];
