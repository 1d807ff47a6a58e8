import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { Readable } from "node:stream";
import { SOURCE_NODE_ARGS } from "../scripts/processes.mjs";
import { assertRunning, waitUntil } from "../test/support/wait.js";
import { freePort, restClient } from "../test/support/stack.js";
import { CORES, cpuBound, median, option, QUICK, ROUNDS, root, writeResult } from "./common.js";
import { startBuiltStack } from "./herald-stack.js";
import { closedLoop, type LoadResult } from "./load.js";
import { cpuOfNamed, cpuSeconds, INFRA_PROCESSES, peakRss } from "./proc-stats.js";

// Ingest: device registrations through the gateway (64 in flight, autocannon) against a bare
// fastify + pg upsert into the same table (bench/bare-register.ts) and against the HTTP
// floor (the same fastify answering without a database), interleaved round by round; then
// the bulk import (POST /v1/devices/import) of an NDJSON file. Each side's CPU is counted
// where it is spent: its own processes, the shared servers, the load generator.

// The gateway is ready only with all the API services up, so the campaign and webhooks services run too.
const INGEST_ROLES = ["credential", "device-registry", "campaign", "webhooks", "gateway"];
const SECONDS = option("seconds", QUICK ? 5 : 10);
/**
 * Unmeasured load before each side's measured seconds: a freshly started gateway's JIT
 * is not done at this rate for some 10 s (built alone with stub backends at ~3,000/s it
 * spent 172 µs a registration in its first 8 s, 83–97 µs in each 8 s after).
 */
const WARM_SECONDS = option("warm", QUICK ? 2 : 15);
const CONCURRENCY = 64;
const IMPORT_LINES = QUICK ? 20_000 : 200_000;

export interface IngestContext {
  releaseDir: string;
  env: Record<string, string>;
  apiKey: string;
  databaseUrl: string;
}

interface IngestRun {
  side: string;
  round: number;
  result: LoadResult;
  cpuPer1k: number;
  /** PostgreSQL's, Redis's and NATS's CPU seconds per 1k: what the side costs the shared servers. */
  infraCpuPer1k: number;
  /** The load generator's (this process's) CPU seconds per 1k. */
  loadCpuPer1k: number;
  peakRssMb: number;
}

interface ImportRun {
  round: number;
  lines: number;
  seconds: number;
  perSecond: number;
  created: number;
  gatewayRssMb: number;
  registryRssMb: number;
  cpuPer10k: number;
  /** The shared servers' CPU seconds per 10k (PostgreSQL, Redis, NATS). */
  infraCpuPer10k: number;
}

const token = (tag: string, i: number) => createHash("sha256").update(`${tag}-${i}`).digest("hex");

export async function ingest(ctx: IngestContext): Promise<void> {
  const runs: IngestRun[] = [];
  const imports: ImportRun[] = [];
  let appId: string | undefined;
  let key: string | undefined;
  const body = (tag: string) => (i: number) => ({
    app_id: appId,
    platform: "ios",
    push_token: token(tag, i),
    language: "en",
  });
  /** Registrations from 64 connections for `seconds`, each a new device of the tag's. */
  const loadAt = (url: string, headers: Record<string, string>) => (tag: string, seconds: number) =>
    closedLoop({ url, headers, body: body(tag), concurrency: CONCURRENCY, seconds, ok: 200 });
  const sides = {
    herald: async (round: number): Promise<IngestRun> => {
      const stack = await startBuiltStack({
        releaseDir: ctx.releaseDir,
        roles: INGEST_ROLES,
        providers: {},
        env: ctx.env,
      });
      try {
        const boot = restClient(stack.gatewayUrl, ctx.apiKey);
        if (!appId) {
          const app = await boot("POST", "/v1/apps", {
            name: "Ingest",
            platform: "ios",
            bundle_id: "com.example.ingest",
          });
          appId = app.body.id as string;
          const k = await boot("POST", `/v1/apps/${appId}/api-keys`, {
            name: "ingest",
            scope: "app",
            rate_limit_per_minute: 1_000_000,
          });
          key = k.body.secret as string;
        }
        const load = loadAt(`${stack.gatewayUrl}/v1/devices/register`, { authorization: `Bearer ${key}` });
        const pids = stack.pids();
        await load(`herald-warm-${round}`, WARM_SECONDS);
        const rss = peakRss(pids);
        const cpu0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
        const shared = sharedCpu();
        const result = await load(`herald-${round}`, SECONDS);
        const cpuOf = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid) - cpu0[n]!]));
        const cpu = Object.values(cpuOf).reduce((a, b) => a + b, 0);
        const sharedPer1k = shared.stop(result.requests);
        const peaks = rss.stop();
        console.log(`  CPU s by process: ${JSON.stringify(cpuOf)}; peak RSS MB: ${JSON.stringify(peaks)}`);
        imports.push(await importFile(stack.gatewayUrl, key!, appId, pids, round));
        return {
          side: "Herald gateway → registry",
          round,
          result,
          cpuPer1k: (cpu / result.requests) * 1000,
          ...sharedPer1k,
          peakRssMb: Object.values(peaks).reduce((a, b) => a + b, 0),
        };
      } finally {
        await stack.stop();
      }
    },
    bare: (round: number) => bareSide(round, "/register", "bare fastify + pg upsert"),
    floor: (round: number) => bareSide(round, "/floor", "HTTP floor: fastify, no database"),
  };
  /** A side served by bench/bare-register.ts: one route of it, alone in its process. */
  const bareSide = async (round: number, path: string, side: string): Promise<IngestRun> => {
    const port = await freePort();
    const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, "bench/bare-register.ts"], {
      cwd: root,
      env: { ...process.env, BARE_PORT: String(port), DATABASE_URL: ctx.databaseUrl },
      stdio: ["ignore", "inherit", "inherit"],
    });
    try {
      // Any answer will do: the bare server is up.
      await waitUntil(
        "the bare registration server",
        async () => {
          assertRunning(child, "the bare registration server");
          return fetch(`http://127.0.0.1:${port}/register`, { method: "OPTIONS" }).then(
            () => true,
            () => false,
          );
        },
        10_000,
      );
      const load = loadAt(`http://127.0.0.1:${port}${path}`, {});
      await load(`bare-warm-${round}`, WARM_SECONDS);
      const rss = peakRss({ bare: child.pid! });
      const cpu0 = cpuSeconds(child.pid!);
      const shared = sharedCpu();
      const result = await load(`bare-${round}`, SECONDS);
      const cpu = cpuSeconds(child.pid!) - cpu0;
      return {
        side,
        round,
        result,
        cpuPer1k: (cpu / result.requests) * 1000,
        ...shared.stop(result.requests),
        peakRssMb: rss.stop().bare ?? 0,
      };
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Herald first in round 0: its registry creates the table the bare side writes to.
    const order = round % 2 === 0 ? (["herald", "bare", "floor"] as const) : (["floor", "bare", "herald"] as const);
    for (const side of order) {
      const run = await sides[side](round);
      runs.push(run);
      console.log(
        `  round ${round + 1} ${run.side.padEnd(28)} ${Math.round(run.result.perSecond)}/s, ` +
          `p50 ${run.result.p50Ms.toFixed(1)} ms, p99 ${run.result.p99Ms.toFixed(1)} ms, ${run.result.errors} errors; ` +
          `CPU s per 1k ${run.cpuPer1k.toFixed(2)} + ${run.infraCpuPer1k.toFixed(2)} shared servers + ` +
          `${run.loadCpuPer1k.toFixed(2)} load generator`,
      );
    }
    const imp = imports[imports.length - 1]!;
    console.log(
      `  round ${round + 1} import of ${imp.lines} lines: ${Math.round(imp.perSecond)}/s; CPU s per 10k ` +
        `${imp.cpuPer10k.toFixed(2)} + ${imp.infraCpuPer10k.toFixed(2)} shared servers`,
    );
  }
  report(runs, imports);
}

/** POST /v1/devices/import of a generated NDJSON file, streamed as it is produced. */
async function importFile(
  gatewayUrl: string,
  key: string,
  appId: string,
  pids: Record<string, number>,
  round: number,
): Promise<ImportRun> {
  let i = 0;
  const file = new Readable({
    read() {
      const chunk: string[] = [];
      for (let n = 0; n < 2_000 && i < IMPORT_LINES; n++, i++) {
        chunk.push(
          JSON.stringify({
            push_token: token(`import-${round}`, i),
            platform: "ios",
            language: "en",
            tags: ["imported"],
          }),
        );
      }
      this.push(chunk.length ? `${chunk.join("\n")}\n` : null);
    },
  });
  const rss = peakRss(pids);
  const cpu0 = Object.values(pids).reduce((n, pid) => n + cpuSeconds(pid), 0);
  const shared = sharedCpu();
  const t0 = performance.now();
  const res = await fetch(`${gatewayUrl}/v1/devices/import?app_id=${appId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
    body: Readable.toWeb(file) as ReadableStream,
    duplex: "half",
  } as RequestInit);
  const answer = (await res.json()) as { created?: number };
  const seconds = (performance.now() - t0) / 1000;
  const cpu = Object.values(pids).reduce((n, pid) => n + cpuSeconds(pid), 0) - cpu0;
  const { infraCpuPer1k } = shared.stop(IMPORT_LINES);
  const peaks = rss.stop();
  if (res.status !== 200 || answer.created !== IMPORT_LINES) {
    throw new Error(`import answered ${res.status}: ${JSON.stringify(answer).slice(0, 500)}`);
  }
  return {
    round,
    lines: IMPORT_LINES,
    seconds,
    perSecond: IMPORT_LINES / seconds,
    created: answer.created,
    gatewayRssMb: peaks.gateway ?? 0,
    registryRssMb: peaks["device-registry"] ?? 0,
    cpuPer10k: (cpu / IMPORT_LINES) * 10_000,
    infraCpuPer10k: infraCpuPer1k * 10,
  };
}

/**
 * CPU seconds per 1k requests that a side costs outside its own processes, from now until
 * stop(requests): the shared servers' (PostgreSQL, Redis, NATS), and this process's
 * (autocannon's load). With the side's own, they add up to what the machine spends per
 * registration, which on two cores bounds the rate at 2,000 / (their sum in ms) a second.
 */
function sharedCpu(): { stop(requests: number): { infraCpuPer1k: number; loadCpuPer1k: number } } {
  const infra = cpuOfNamed(INFRA_PROCESSES);
  const load0 = process.cpuUsage();
  return {
    stop(requests) {
      const load = process.cpuUsage(load0);
      return {
        infraCpuPer1k: (infra.stop() / requests) * 1000,
        loadCpuPer1k: ((load.user + load.system) / 1e6 / requests) * 1000,
      };
    },
  };
}

function report(runs: IngestRun[], imports: ImportRun[]) {
  const sides = [...new Set(runs.map((r) => r.side))];
  const rows = sides.map((side) => {
    const rs = runs.filter((r) => r.side === side);
    return {
      side,
      perSecond: median(rs.map((r) => r.result.perSecond)),
      p50Ms: median(rs.map((r) => r.result.p50Ms)),
      p99Ms: median(rs.map((r) => r.result.p99Ms)),
      cpuPer1k: median(rs.map((r) => r.cpuPer1k)),
      infraCpuPer1k: median(rs.map((r) => r.infraCpuPer1k)),
      loadCpuPer1k: median(rs.map((r) => r.loadCpuPer1k)),
      peakRssMb: Math.max(...rs.map((r) => r.peakRssMb)),
      errors: rs.reduce((n, r) => n + r.result.errors, 0),
    };
  });
  const bare = rows.find((r) => r.side.startsWith("bare"))!;
  const imp = {
    perSecond: median(imports.map((r) => r.perSecond)),
    cpuPer10k: median(imports.map((r) => r.cpuPer10k)),
    infraCpuPer10k: median(imports.map((r) => r.infraCpuPer10k)),
    gatewayRssMb: Math.max(...imports.map((r) => r.gatewayRssMb)),
    registryRssMb: Math.max(...imports.map((r) => r.registryRssMb)),
  };
  const table = [
    `## Ingest: device registrations, ${CONCURRENCY} in flight (autocannon), ${SECONDS} s per side after ${WARM_SECONDS} s unmeasured`,
    "",
    `${ROUNDS} interleaved round(s), medians; a new device (iOS token) every request, from an empty table. ` +
      "Target: ≥ 3,000/s, p99 ≤ 50 ms, ≥ 0.6 × bare. CPU bound: the rate at which the three CPU " +
      `columns would fill all ${CORES} cores.`,
    "",
    "| side | registrations/s | ratio to bare | p50 ms | p99 ms | CPU s per 1k: its processes | shared servers | load generator | CPU bound /s | peak RSS MB (its processes) | errors |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.side} | ${Math.round(r.perSecond)} | ${(r.perSecond / bare.perSecond).toFixed(2)} | ${r.p50Ms.toFixed(1)} | ` +
        `${r.p99Ms.toFixed(1)} | ${r.cpuPer1k.toFixed(2)} | ${r.infraCpuPer1k.toFixed(2)} | ${r.loadCpuPer1k.toFixed(2)} | ` +
        `${Math.round(cpuBound(r.cpuPer1k + r.infraCpuPer1k + r.loadCpuPer1k, 1000))} | ${Math.round(r.peakRssMb)} | ${r.errors} |`,
    ),
    "",
    `Bulk import: POST /v1/devices/import, ${IMPORT_LINES.toLocaleString("en")} NDJSON lines streamed, ` +
      "new devices (target ≥ 20,000/s, memory bounded).",
    "",
    "| devices/s | CPU s per 10k: Herald's processes | shared servers | peak RSS MB gateway | peak RSS MB registry |",
    "|---:|---:|---:|---:|---:|",
    `| ${Math.round(imp.perSecond)} | ${imp.cpuPer10k.toFixed(2)} | ${imp.infraCpuPer10k.toFixed(2)} | ` +
      `${Math.round(imp.gatewayRssMb)} | ${Math.round(imp.registryRssMb)} |`,
  ].join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    `ingest${QUICK ? "-quick" : ""}`,
    { concurrency: CONCURRENCY, seconds: SECONDS, runs, rows, imports, import: imp },
    table,
  );
}
