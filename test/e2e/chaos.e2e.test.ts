import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { BASELINE, FAULTS } from "../support/chaos/faults.js";
import { createChaosFleet, type ChaosFleet } from "../support/chaos/fleet.js";
import { ChaosObserver } from "../support/chaos/observer.js";
import { renderReport, renderTable } from "../support/chaos/report.js";
import { closeChaosRun, expectExactCampaign, runFaultOrDump, type FaultResult } from "../support/chaos/run-fault.js";
import { startPrivateInfra, type PrivateInfra } from "../support/private-infra.js";
import { startStack, type Stack } from "../support/stack.js";

// Chaos: one mixed campaign (iOS, Android, web) per fault, each fault striking while the
// campaign is delivered — kill -9 of every Herald process and sender (and two senders at
// once), restarts of NATS, PostgreSQL and Redis, and simulator bursts (drops, 503, 429 with
// Retry-After, GOAWAY). After each: the campaign completes, every device has exactly one
// outcome, none lost, duplicates within one in-flight batch per killed sender.
//
// The servers restarted here are private to this file (test/support/private-infra.ts),
// never the machine's shared ones that other test files use at the same time.
//
// Both profiles first send the campaign once without a fault (the baseline to compare
// completion times with). Short profile (inside `npm test`, about 1.5 min on 2 cores):
// 3,000 devices and seven faults — kill -9 of the campaign service and of sender-webpush,
// restarts of NATS, PostgreSQL and Redis, NATS frozen for 6 s, one mixed simulator burst. The other kills (gateway, credential, device-registry,
// sender-apns, sender-fcm, two senders at once) and the separate simulator bursts run in
// the long profile only: `npm run chaos` (scripts/chaos.mjs) sets HERALD_CHAOS_PROFILE=long
// (50,000 devices, every fault) and HERALD_CHAOS_REPORT, the report's path.
const LONG = process.env.HERALD_CHAOS_PROFILE === "long";
const DEVICES = Number(process.env.HERALD_CHAOS_DEVICES || (LONG ? 50_000 : 3_000));
const BATCH = LONG ? 250 : 100;
const FAULT_TIMEOUT_MS = LONG ? 600_000 : 120_000;
const REPORT = process.env.HERALD_CHAOS_REPORT;
// HERALD_CHAOS_FAULTS=<id>,<id>: only these faults (ids in test/support/chaos/faults.ts).
const ONLY = process.env.HERALD_CHAOS_FAULTS?.split(",").filter(Boolean);
const faults = [BASELINE, ...FAULTS].filter((f) => (ONLY ? ONLY.includes(f.id) : LONG || f.short));

// Each sender works one batch at a time (so "one in-flight batch" is a sharp bound) and
// gets a killed sender's batch back after 10 s instead of 60; a killed campaign service's
// fan-out is taken over after a 5 s lease instead of 30. Retries keep their defaults.
const SENDER_ENV = { SENDER_CONCURRENT_BATCHES: "1", SENDER_ACK_WAIT_MS: "10000" };
const CAMPAIGN_ENV = { FANOUT_BATCH_SIZE: String(BATCH), FANOUT_LEASE_MS: "5000" };
const SIM_ENV = { SIM_SEED: "20261126" };

let infra: PrivateInfra;
let stack: Stack;
let sim: SimAdminClient;
let fleet: ChaosFleet;
let observer: ChaosObserver;
const results: FaultResult[] = [];
const errors: { title: string; error: string }[] = [];
const startedAt = Date.now();

beforeAll(async () => {
  infra = await startPrivateInfra();
  stack = await startStack(infra.urls, {
    env: { LOG_LEVEL: "info" },
    envFor: {
      campaign: CAMPAIGN_ENV,
      "sender-apns": SENDER_ENV,
      "sender-fcm": SENDER_ENV,
      "sender-webpush": SENDER_ENV,
      "provider-sim": SIM_ENV,
    },
  });
  sim = new SimAdminClient(stack.simAdminUrl);
  fleet = await createChaosFleet({ stack, sim, databaseUrl: infra.urls.databaseUrl, devices: DEVICES });
  observer = new ChaosObserver(
    infra.urls.databaseUrl,
    stack.schemas.campaign!,
    sim,
    infra.urls.natsUrl,
    stack.process("campaign").env.NATS_NAMESPACE!,
  );
}, 600_000);

afterAll(async () => {
  const table = renderTable(results);
  console.log(`chaos (${LONG ? "long" : "short"} profile, ${DEVICES} devices):\n${table}`);
  if (REPORT && results.length + errors.length > 0) {
    const date = new Date().toISOString().slice(0, 10);
    const report = renderReport(
      {
        profile: LONG ? "long" : "short",
        date,
        devices: DEVICES,
        batchSize: BATCH,
        settings: [
          `FANOUT_BATCH_SIZE=${BATCH}`,
          ...Object.entries({ ...SENDER_ENV, FANOUT_LEASE_MS: CAMPAIGN_ENV.FANOUT_LEASE_MS, ...SIM_ENV }).map(
            ([k, v]) => `${k}=${v}`,
          ),
          "every other setting at its default (retries: 6 attempts, 500 ms base, full jitter)",
        ],
        machine: `${os.cpus().length} cores, Node ${process.version}`,
        durationMs: Date.now() - startedAt,
        skipped: FAULTS.filter((f) => !faults.includes(f)).map((f) => f.title),
        errors,
      },
      results,
    );
    mkdirSync(path.dirname(REPORT), { recursive: true });
    writeFileSync(REPORT, report);
    console.log(`chaos report written to ${REPORT}`);
  }
  await closeChaosRun({ observer, stack, infra });
}, 120_000);

describe(`chaos: a mixed campaign to ${DEVICES.toLocaleString("en")} devices under faults`, () => {
  for (const fault of faults) {
    it(
      fault.title,
      async () => {
        let r: FaultResult;
        try {
          r = await runFaultOrDump(fault, {
            stack,
            infra,
            sim,
            fleet,
            observer,
            batchSize: BATCH,
            timeoutMs: FAULT_TIMEOUT_MS,
          });
        } catch (err) {
          errors.push({ title: fault.title, error: (err as Error).message });
          throw err;
        }
        results.push(r);
        console.log(
          `${fault.title}: resumed ${r.resumeMs} ms, completed ${r.completeMs} ms after the fault; ` +
            `lost ${r.lost}, ${r.duplicateDevices} devices with a duplicate (bound ${r.bound})` +
            (r.undelivered.length ? `; not delivered: ${r.undelivered.join(", ")}` : ""),
        );
        expectExactCampaign(r, DEVICES);
      },
      FAULT_TIMEOUT_MS + 120_000,
    );
  }
});
