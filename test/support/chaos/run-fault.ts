import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import type { SimAdminClient } from "@herald/provider-sim/admin-client";
import type { PrivateInfra } from "../private-infra.js";
import type { Stack } from "../stack.js";
import type { Fault, ResumeSignal } from "./faults.js";
import { SIM_PLATFORMS, type ChaosFleet, type SimPlatform } from "./fleet.js";
import type { CampaignRow, ChaosObserver } from "./observer.js";

export interface FaultResult {
  id: string;
  title: string;
  /** Where the campaign stood when the fault struck. */
  injectedAt: string;
  /** Fault → every resume signal moved again after the repair (or the campaign completed). */
  resumeMs: number;
  /** Fault → campaign completed. */
  completeMs: number;
  /** POST /v1/push/send → campaign completed. */
  campaignMs: number;
  audience: number;
  stats: { sent: number; delivered: number; failed: number; bounced: number; throttled: number };
  /** Outcome rows of the campaign, and distinct devices among them. */
  outcomeRows: number;
  outcomeDevices: number;
  /** Targeted devices the simulator never got a push for. */
  lost: number;
  /** Devices that got more than one push, and the pushes beyond the first. */
  duplicateDevices: number;
  extraDeliveries: number;
  /** Pushes to targets outside the campaign's audience (must be 0). */
  strangers: number;
  /** The most devices with a duplicate the fault may cause. */
  bound: number;
  /** Outcomes other than delivered, by kind and reason. */
  undelivered: string[];
}

export interface RunOptions {
  stack: Stack;
  infra: PrivateInfra;
  sim: SimAdminClient;
  fleet: ChaosFleet;
  observer: ChaosObserver;
  batchSize: number;
  /** How long the campaign may take to complete after the fault. */
  timeoutMs: number;
}

const POLL_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One fault during one campaign to every device of the fleet: send, wait for the trigger,
 * inject the fault and its repair, measure when progress resumes and when the campaign
 * completes, wait until no batch is left in the delivery stream (a redelivered batch
 * counts for this fault, not the next), then count per device what the simulator got.
 */
export async function runFault(fault: Fault, opts: RunOptions): Promise<FaultResult> {
  const { sim, fleet, observer } = opts;
  const audience = fleet.devices;
  await sim.clearDeliveries();
  await sim.resetStats();
  const started = Date.now();
  const sent = await fleet.api("POST", "/v1/push/send", {
    app_id: fleet.appId,
    name: `chaos: ${fault.id}`,
    contents: { en: { title: "Chaos", body: fault.title } },
    data: { fault: fault.id },
  });
  if (sent.status !== 201) throw new Error(`send answered ${sent.status}: ${sent.text}`);
  const id = sent.body.id as string;
  const row = () => observer.campaign(id);

  const injectedAt = await waitForTrigger(fault, opts, id, audience);
  const { faultAt, repairedAt } = await fault.inject({
    stack: opts.stack,
    infra: opts.infra,
    sim,
    completed: async () => (await row())?.status === "completed",
  });

  const resumedAt = await waitForResume(fault.resume, opts, id);
  const deadline = faultAt + opts.timeoutMs;
  let last: CampaignRow | undefined;
  for (;;) {
    last = (await row()) ?? last;
    if (last?.status === "completed") break;
    if (last?.status === "failed") throw new Error(`campaign failed after ${fault.id}: ${JSON.stringify(last)}`);
    if (Date.now() > deadline) {
      throw new Error(
        `campaign not completed ${opts.timeoutMs} ms after ${fault.id} (repaired after ${repairedAt - faultAt} ms): ${JSON.stringify(last)}`,
      );
    }
    await sleep(POLL_MS);
  }
  const completedAt = Date.now();
  // A batch whose outcomes are recorded but whose ack was lost comes back after the ack wait.
  for (;;) {
    if ((await observer.deliveryBacklog()) === 0) break;
    if (Date.now() > deadline) throw new Error(`delivery stream not drained after ${fault.id}`);
    await sleep(200);
  }

  const campaign = await readCampaign(fleet, id, deadline);
  const counts = (await sim.deliveryCount()).by_target;
  let lost = 0;
  let duplicateDevices = 0;
  let extraDeliveries = 0;
  const targeted = new Set<string>();
  for (const target of SIM_PLATFORMS.flatMap((p) => fleet.targets[p])) {
    targeted.add(target);
    const n = counts[target] ?? 0;
    if (n === 0) lost++;
    if (n > 1) {
      duplicateDevices++;
      extraDeliveries += n - 1;
    }
  }
  const outcomes = await observer.outcomeRows(id);
  return {
    id: fault.id,
    title: fault.title,
    injectedAt,
    resumeMs: Math.max(0, Math.min(resumedAt, completedAt) - faultAt),
    completeMs: completedAt - faultAt,
    campaignMs: completedAt - started,
    audience: Number(campaign.audience_size),
    stats: campaign.stats,
    outcomeRows: outcomes.rows,
    outcomeDevices: outcomes.devices,
    lost,
    duplicateDevices,
    extraDeliveries,
    strangers: Object.keys(counts).filter((t) => !targeted.has(t)).length,
    bound: fault.redeliveredBatches * opts.batchSize,
    undelivered: await observer.undelivered(id),
  };
}

async function waitForTrigger(fault: Fault, opts: RunOptions, id: string, audience: number): Promise<string> {
  const { observer, fleet } = opts;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (fault.trigger.kind === "fanout") {
      const row = await observer.campaign(id);
      if (row && row.published_count > 0) {
        return row.fanout_done
          ? `after fan-out (${row.sent.toLocaleString("en")} outcomes recorded)`
          : `fan-out, ${row.published_count.toLocaleString("en")} of ${audience.toLocaleString("en")} published`;
      }
    } else {
      const { platforms, fraction } = fault.trigger;
      const total = platforms.reduce((t, p) => t + fleet.targets[p].length, 0);
      const done = (await observer.accepted(platforms)) ?? 0;
      if (done >= fraction * total) {
        return `${Math.round((100 * done) / total)} % of ${platforms.join(" + ")} delivered`;
      }
    }
    await sleep(POLL_MS);
  }
  throw new Error(`trigger of ${fault.id} never came: ${JSON.stringify(await observer.campaign(id))}`);
}

/** When every signal has moved past where it stood at the repair; the campaign completing also ends the wait. */
async function waitForResume(signals: ResumeSignal[], opts: RunOptions, id: string): Promise<number> {
  const { observer, fleet } = opts;
  const probe = async (s: ResumeSignal): Promise<number | undefined> => {
    if (s.kind === "deliveries") return observer.accepted(s.platforms as SimPlatform[]);
    if (s.kind === "outcomes") return (await observer.campaign(id))?.sent;
    const res = await fleet.api("GET", `/v1/campaigns/${id}`).catch(() => undefined);
    return res?.status === 200 ? 1 : undefined;
  };
  const baseline: (number | undefined)[] = [];
  for (const s of signals) baseline.push(s.kind === "api" ? 0 : await probe(s));
  const pending = new Set(signals.keys());
  const deadline = Date.now() + opts.timeoutMs;
  while (pending.size > 0 && Date.now() < deadline) {
    for (const i of [...pending]) {
      const now = await probe(signals[i]!);
      if (now === undefined) continue;
      // A probe that failed at the repair (its server still waking) takes its first answer as the baseline.
      if (baseline[i] === undefined) baseline[i] = now;
      else if (now > baseline[i]!) pending.delete(i);
    }
    if (pending.size > 0 && (await observer.campaign(id))?.status === "completed") break;
    await sleep(POLL_MS);
  }
  return Date.now();
}

async function readCampaign(fleet: ChaosFleet, id: string, deadline: number) {
  for (;;) {
    const res = await fleet.api("GET", `/v1/campaigns/${id}`).catch(() => undefined);
    if (res?.status === 200) return res.body;
    if (Date.now() > deadline) throw new Error(`GET /v1/campaigns/${id} answered ${res?.status}`);
    await sleep(200);
  }
}

/**
 * runFault; when it fails, the processes' output (it lives only as long as the stack) is
 * written to a file the error names, with the processes that had exited and `detail()`.
 */
export async function runFaultOrDump(
  fault: Fault,
  opts: RunOptions,
  detail: () => string = () => "",
): Promise<FaultResult> {
  try {
    return await runFault(fault, opts);
  } catch (err) {
    const { stack } = opts;
    const dump = path.join(os.tmpdir(), `herald-chaos-${fault.id}-${Date.now()}.log`);
    writeFileSync(dump, stack.logs());
    const down = stack.processes.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    const exited = down.length ? `; exited: ${down.map((p) => p.name).join(", ")}` : "";
    const more = detail();
    throw new Error(`${(err as Error).message}${exited}${more ? `; ${more}` : ""} (logs: ${dump})`, { cause: err });
  }
}

/**
 * What every fault must leave: exact stats, one outcome per device, every device
 * delivered, none lost, no push to a stranger, duplicates within the fault's bound.
 */
export function expectExactCampaign(r: FaultResult, devices: number): void {
  expect(r.audience).toBe(devices);
  expect(r.stats.sent).toBe(r.audience);
  expect(r.stats.delivered + r.stats.failed + r.stats.bounced + r.stats.throttled).toBe(r.stats.sent);
  expect(r.stats.delivered).toBe(devices);
  expect(r.outcomeRows).toBe(devices);
  expect(r.outcomeDevices).toBe(devices);
  expect(r.lost).toBe(0);
  expect(r.strangers).toBe(0);
  expect(r.duplicateDevices).toBeLessThanOrEqual(r.bound);
}

/** The end of a chaos file: its observer, then the stack, then the private infrastructure, whatever fails. */
export async function closeChaosRun(run: {
  observer?: ChaosObserver;
  stack?: Stack;
  infra?: PrivateInfra;
}): Promise<void> {
  await run.observer?.close();
  try {
    await run.stack?.stop();
  } finally {
    await run.infra?.close();
  }
}
