import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { stageRelease } from "../scripts/stage-release.mjs";
import { caBundle, ensureSimulatorCa } from "../scripts/trust.mjs";
import { DEFAULT_URLS, stackEnv } from "../test/support/infra-urls.js";
import { deleteNamespaceStreams } from "../test/support/nats-streams.js";
import { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { CORES, freshDatabase, QUICK, ROUNDS, root, text } from "./common.js";
import { e2e } from "./e2e.js";
import { ingest } from "./ingest.js";
import { outcomes } from "./outcomes.js";
import { senders } from "./senders.js";
import { soak } from "./soak.js";

// `npm run bench [-- --quick] [--scenario e2e|ingest|senders|outcomes|soak] [--rounds R]` plus each scenario's own options
//
// On the built processes (what the image runs), sides interleaved round by round, each
// figure the median of the rounds. Results: bench/results/<date>-<name>.{json,md}.
// Scenarios: bench/e2e.ts (campaigns end to end, and node-apn sending directly),
// bench/ingest.ts (registrations, import), bench/senders.ts (each sender alone vs its peer
// library and a raw node:http2 client on nghttpd), bench/soak.ts (memory under a steady
// load for ten minutes; only when asked for: --scenario soak, or `npm run soak`),
// bench/outcomes.ts (outcome ingestion and receipts' size, before and after receipt batches).

/** --scenario e2e | ingest | senders | outcomes (default: all). */
const SCENARIO = text("scenario", "all");
const runs = (name: string) => SCENARIO === name || (SCENARIO === "all" && name !== "soak");

async function main() {
  console.log(`bench: ${QUICK ? "quick, " : ""}${ROUNDS} round(s), Node ${process.version}, ${CORES} cores`);
  // Per run: two benchmarks at once (say, of two worktrees' helpers) must not share one.
  // The outcomes scenario runs the stores from source and needs no release.
  const releaseDir = path.join(root, `.herald/bench-release-${process.pid}`);
  if (["e2e", "ingest", "senders", "soak"].some(runs)) stageRelease(releaseDir, { build: true, preferOffline: true });
  const id = `bench_${Date.now().toString(36)}`;
  const databaseUrl = await freshDatabase("herald_bench");
  // The staging's install and the new database leave hundreds of MB to write back;
  // PostgreSQL's commits would wait behind that writeback in the first measured round.
  const t0 = performance.now();
  execFileSync("sync");
  console.log(`bench: release staged, written back to disk in ${Math.round(performance.now() - t0)} ms`);
  const otlp = await startOtlpReceiver(0, { countOnly: true });
  const apiKey = `hk_live_${randomBytes(30).toString("hex").slice(0, 40)}`;
  const env = {
    ...stackEnv({ ...DEFAULT_URLS, databaseUrl }, id, apiKey),
    LOG_LEVEL: "warn",
    NODE_EXTRA_CA_CERTS: caBundle(root, ensureSimulatorCa(root)),
    OTEL_BSP_MAX_QUEUE_SIZE: "65536",
  };
  try {
    if (runs("e2e")) await e2e({ releaseDir, env, apiKey, databaseUrl, otlp });
    if (runs("ingest")) await ingest({ releaseDir, env, apiKey, databaseUrl });
    if (runs("senders")) await senders({ releaseDir, env, apiKey, databaseUrl });
    if (runs("outcomes")) await outcomes({ databaseUrl });
    if (runs("soak")) await soak({ releaseDir, env, apiKey, databaseUrl });
  } finally {
    await otlp.close();
    rmSync(releaseDir, { recursive: true, force: true });
    await deleteNamespaceStreams(DEFAULT_URLS.natsUrl, id);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench: ${(err as Error).stack ?? err}`);
    process.exit(1);
  },
);
