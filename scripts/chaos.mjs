#!/usr/bin/env node
// `npm run chaos`: the chaos suite's long profile (test/e2e/chaos.e2e.test.ts) — 50,000
// devices, every fault — on the pinned Node, and its report in chaos/results/<date>.md.
// The short profile runs inside `npm test`. The suite restarts only PostgreSQL, NATS and
// Redis servers of its own (test/support/private-infra.ts); the shared ones must answer
// all the same, for the end-to-end global setup. Extra arguments go to vitest.
//
// It also runs test/e2e/nats-cluster.e2e.test.ts's long profile (20,000 devices on a
// three-server NATS cluster, streams at R3: kill -9 of the DELIVERY leader, then a rolling
// restart), whose figures go next to the report (<report>-nats-cluster.md).
//
// HERALD_CHAOS_DEVICES=<n> changes the audience (HERALD_NATS_CLUSTER_DEVICES the cluster
// test's), HERALD_CHAOS_FAULTS=<id>,<id> picks faults, HERALD_CHAOS_REPORT=<path> writes the
// report elsewhere.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInfra } from "./infra.mjs";
import { ensurePinnedNode } from "./pinned-node.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

try {
  await ensurePinnedNode();
  await ensureInfra({ install: process.env.HERALD_INSTALL_INFRA === "1" });
} catch (err) {
  console.error(`npm run chaos: ${err.message}`);
  process.exit(1);
}

const report =
  process.env.HERALD_CHAOS_REPORT || path.join("chaos/results", `${new Date().toISOString().slice(0, 10)}.md`);
console.log(`npm run chaos: long profile on Node.js ${process.version}; report: ${report}`);
const vitest = spawnSync(
  "npx",
  [
    "vitest",
    "run",
    "--project",
    "e2e",
    "test/e2e/chaos.e2e.test.ts",
    "test/e2e/nats-cluster.e2e.test.ts",
    ...process.argv.slice(2),
  ],
  { stdio: "inherit", env: { ...process.env, HERALD_CHAOS_PROFILE: "long", HERALD_CHAOS_REPORT: report } },
);
process.exit(vitest.status ?? 1);
