import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { SOURCE_NODE_ARGS } from "../scripts/processes.mjs";
import { stageRelease } from "../scripts/stage-release.mjs";
import { caBundle, ensureSimulatorCa } from "../scripts/trust.mjs";
import { makeApnsKey } from "../test/support/credential-fixtures.js";
import { DEFAULT_URLS } from "../test/support/infra-urls.js";
import { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { freePort, restClient } from "../test/support/stack.js";
import { type BuiltStack, startBuiltStack } from "./herald-stack.js";
import { closedLoop, type LoadResult } from "./load.js";
import { cpuSeconds, peakRss } from "./proc-stats.js";

// `npm run bench [-- --quick] [--scenario e2e|ingest] [--devices N] [--rounds R] [--only S]`
//
// On the built processes (what the image runs), sides interleaved round by round, each
// figure the median of the rounds. Results: bench/results/<date>-<name>.{json,md}.
// - e2e: an iOS campaign from `POST /v1/push/send` to `completed`, delivered to a lean
//   APNs sink in its own process, with tracing off, with the SDK on but the send not
//   sampled, and with every span recorded and exported (100 %).
// - ingest: device registrations through the gateway, 64 in flight, against a bare
//   fastify + pg upsert into the same table (bench/bare-register.ts).

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const QUICK = flag("quick");
const DEVICES = option("devices", QUICK ? 5_000 : 50_000);
const ROUNDS = option("rounds", QUICK ? 1 : 3);
const ROLES = ["credential", "device-registry", "campaign", "sender-apns", "gateway"];
// The gateway is ready only with all three API services up, so the campaign service runs too.
const INGEST_ROLES = ["credential", "device-registry", "campaign", "gateway"];
const INGEST_SECONDS = QUICK ? 5 : 10;
const INGEST_CONCURRENCY = 64;
/** --scenario e2e | ingest (default: both). */
const SCENARIO = args.includes("--scenario") ? args[args.indexOf("--scenario") + 1]! : "all";
const root = path.resolve(import.meta.dirname, "..");

interface Variant {
  name: string;
  env: (otlp: string) => Record<string, string>;
}

const ALL_VARIANTS: Variant[] = [
  { name: "tracing off", env: () => ({}) },
  {
    name: "tracing on, send not sampled",
    env: (otlp) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_TRACES_SAMPLER: "parentbased_always_off" }),
  },
  {
    name: "tracing on, 100 % sampled",
    env: (otlp) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_TRACES_SAMPLER: "parentbased_always_on" }),
  },
];

/** --only <substring>: run the variants whose name contains it. */
const only = args.includes("--only") ? args[args.indexOf("--only") + 1]! : "";
const VARIANTS = ALL_VARIANTS.filter((v) => v.name.includes(only));

interface Run {
  variant: string;
  round: number;
  seconds: number;
  perSecond: number;
  firstDeliveryMs: number;
  cpuSeconds: Record<string, number>;
  cpuPer10k: number;
  peakRssMb: Record<string, number>;
  spanBytes: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function startSink(): Promise<{ port: number; admin: string; child: ChildProcess }> {
  const port = await freePort();
  const adminPort = await freePort();
  const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, "bench/apns-sink.ts"], {
    cwd: root,
    env: { ...process.env, SINK_PORT: String(port), SINK_ADMIN_PORT: String(adminPort) },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`${admin}/count`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { port, admin, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the APNs sink did not start");
}

async function freshDatabase(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: DEFAULT_URLS.databaseUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(DEFAULT_URLS.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Devices straight into the registry's table: registering them is another benchmark. */
async function seedIosDevices(databaseUrl: string, appId: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  for (let i = 0; i < n; i += 10_000) {
    const tokens = Array.from({ length: Math.min(10_000, n - i) }, () => randomBytes(32).toString("hex"));
    await client.query(
      `INSERT INTO device_registry.devices (app_id, push_token, token_hash, platform, language)
       SELECT $1, t, h, 'ios', 'en' FROM unnest($2::text[], $3::bytea[]) AS x(t, h)`,
      [appId, tokens, tokens.map((t) => createHash("sha256").update(t).digest())],
    );
  }
  await client.end();
}

async function main() {
  console.log(`bench: ${DEVICES} iOS devices, ${ROUNDS} round(s), Node ${process.version}, ${os.cpus().length} cores`);
  const releaseDir = stageRelease(path.join(root, ".herald/bench-release"), { build: true, preferOffline: true });
  const id = `bench_${Date.now().toString(36)}`;
  const databaseUrl = await freshDatabase("herald_bench");
  const sink = await startSink();
  const otlp = await startOtlpReceiver(0, { countOnly: true });
  const apiKey = `hk_live_${randomBytes(30).toString("hex").slice(0, 40)}`;
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_URL: DEFAULT_URLS.natsUrl,
    NATS_NAMESPACE: id,
    REDIS_URL: DEFAULT_URLS.redisUrl,
    REDIS_KEY_PREFIX: `${id}:`,
    HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
    HERALD_BOOTSTRAP_API_KEY: apiKey,
    LOG_LEVEL: "warn",
    NODE_EXTRA_CA_CERTS: caBundle(root, ensureSimulatorCa(root)),
    OTEL_BSP_MAX_QUEUE_SIZE: "65536",
  };
  const providers = { APNS_URL: `https://127.0.0.1:${sink.port}` };
  let appId: string | undefined;
  const runs: Run[] = [];
  try {
    for (let round = 0; round < (SCENARIO === "ingest" ? 0 : ROUNDS); round++) {
      // Interleaved: each round starts with the next variant.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
      for (const variant of order) {
        const stack: BuiltStack = await startBuiltStack({
          releaseDir,
          roles: ROLES,
          providers,
          env: { ...env, ...variant.env(otlp.url) },
        });
        try {
          const boot = restClient(stack.gatewayUrl, apiKey);
          if (!appId) {
            const app = await boot("POST", "/v1/apps", {
              name: "Bench",
              platform: "ios",
              bundle_id: "com.example.bench",
            });
            appId = app.body.id as string;
            const key = makeApnsKey();
            const config = await boot("POST", `/v1/apps/${appId}/platform-config`, {
              platform: "ios",
              apns_p8_key: key.p8,
              apns_key_id: key.keyId,
              apns_team_id: key.teamId,
              apns_topic: "com.example.bench",
              apns_environment: "production",
            });
            if (config.status !== 200) throw new Error(`platform config: ${config.text}`);
            await seedIosDevices(databaseUrl, appId, DEVICES);
          }
          runs.push(await runCampaign(stack, boot, appId, sink.admin, otlp, variant.name, round));
          const last = runs[runs.length - 1]!;
          console.log(
            `  round ${round + 1} ${variant.name.padEnd(30)} ${Math.round(last.perSecond)}/s, ` +
              `CPU ${last.cpuPer10k.toFixed(2)} s per 10k, first delivery ${last.firstDeliveryMs} ms`,
          );
        } finally {
          await stack.stop();
        }
      }
    }
    if (runs.length > 0) report(runs);
    if (SCENARIO !== "e2e") reportIngest(await ingest(releaseDir, env, apiKey, databaseUrl));
  } finally {
    sink.child.kill("SIGTERM");
    await otlp.close();
  }
}

interface IngestRun {
  side: string;
  round: number;
  result: LoadResult;
  cpuPer1k: number;
}

/** Registrations through the gateway vs the bare limit, interleaved. */
async function ingest(
  releaseDir: string,
  env: Record<string, string>,
  apiKey: string,
  databaseUrl: string,
): Promise<IngestRun[]> {
  const runs: IngestRun[] = [];
  let appId: string | undefined;
  let key: string | undefined;
  const body = (tag: string) => (i: number) => ({
    app_id: appId,
    platform: "ios",
    push_token: createHash("sha256").update(`${tag}-${i}`).digest("hex"),
    language: "en",
  });
  const sides = {
    herald: async (round: number): Promise<IngestRun> => {
      const stack = await startBuiltStack({ releaseDir, roles: INGEST_ROLES, providers: {}, env });
      try {
        const boot = restClient(stack.gatewayUrl, apiKey);
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
        const pids = stack.pids();
        const cpu0 = Object.values(pids).reduce((n, pid) => n + cpuSeconds(pid), 0);
        const result = await closedLoop({
          url: `${stack.gatewayUrl}/v1/devices/register`,
          headers: { authorization: `Bearer ${key}` },
          body: body(`herald-${round}`),
          concurrency: INGEST_CONCURRENCY,
          seconds: INGEST_SECONDS,
          ok: 200,
        });
        const cpu = Object.values(pids).reduce((n, pid) => n + cpuSeconds(pid), 0) - cpu0;
        return { side: "Herald gateway → registry", round, result, cpuPer1k: (cpu / result.requests) * 1000 };
      } finally {
        await stack.stop();
      }
    },
    bare: async (round: number): Promise<IngestRun> => {
      const port = await freePort();
      const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, "bench/bare-register.ts"], {
        cwd: root,
        env: { ...process.env, BARE_PORT: String(port), DATABASE_URL: databaseUrl },
        stdio: ["ignore", "inherit", "inherit"],
      });
      try {
        for (let i = 0; i < 100; i++) {
          const up = await fetch(`http://127.0.0.1:${port}/register`, { method: "OPTIONS" }).then(
            () => true,
            () => false,
          );
          if (up) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const cpu0 = cpuSeconds(child.pid!);
        const result = await closedLoop({
          url: `http://127.0.0.1:${port}/register`,
          headers: {},
          body: body(`bare-${round}`),
          concurrency: INGEST_CONCURRENCY,
          seconds: INGEST_SECONDS,
          ok: 200,
        });
        const cpu = cpuSeconds(child.pid!) - cpu0;
        return { side: "bare fastify + pg upsert", round, result, cpuPer1k: (cpu / result.requests) * 1000 };
      } finally {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Herald first in round 0: its registry creates the table the bare side writes to.
    const order = round % 2 === 0 ? (["herald", "bare"] as const) : (["bare", "herald"] as const);
    for (const side of order) {
      const run = await sides[side](round);
      runs.push(run);
      console.log(
        `  round ${round + 1} ${run.side.padEnd(28)} ${Math.round(run.result.perSecond)}/s, ` +
          `p50 ${run.result.p50Ms.toFixed(1)} ms, p99 ${run.result.p99Ms.toFixed(1)} ms, ${run.result.errors} errors`,
      );
    }
  }
  return runs;
}

function reportIngest(runs: IngestRun[]) {
  const sides = [...new Set(runs.map((r) => r.side))];
  const rows = sides.map((side) => {
    const rs = runs.filter((r) => r.side === side);
    return {
      side,
      perSecond: median(rs.map((r) => r.result.perSecond)),
      p50Ms: median(rs.map((r) => r.result.p50Ms)),
      p99Ms: median(rs.map((r) => r.result.p99Ms)),
      cpuPer1k: median(rs.map((r) => r.cpuPer1k)),
      errors: rs.reduce((n, r) => n + r.result.errors, 0),
    };
  });
  const bare = rows.find((r) => r.side.startsWith("bare"))!;
  const table = [
    `## Ingest: device registrations, ${INGEST_CONCURRENCY} in flight, ${INGEST_SECONDS} s per side`,
    "",
    `${ROUNDS} interleaved round(s), medians; a new device (iOS token) every request.`,
    "",
    "| side | registrations/s | ratio to bare | p50 ms | p99 ms | CPU s per 1k | errors |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.side} | ${Math.round(r.perSecond)} | ${(r.perSecond / bare.perSecond).toFixed(2)} | ${r.p50Ms.toFixed(1)} | ` +
        `${r.p99Ms.toFixed(1)} | ${r.cpuPer1k.toFixed(2)} | ${r.errors} |`,
    ),
  ].join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    `ingest${QUICK ? "-quick" : ""}`,
    { concurrency: INGEST_CONCURRENCY, seconds: INGEST_SECONDS, runs, rows },
    table,
  );
}

function writeResult(name: string, json: unknown, table: string) {
  const dir = path.join(root, "bench/results");
  mkdirSync(dir, { recursive: true });
  const file = `${new Date().toISOString().slice(0, 10)}-${name}`;
  writeFileSync(path.join(dir, `${file}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(path.join(dir, `${file}.md`), `${table}\n`);
  console.log(`results: bench/results/${file}.{json,md}`);
}

async function runCampaign(
  stack: BuiltStack,
  api: ReturnType<typeof restClient>,
  appId: string,
  sinkAdmin: string,
  otlp: Awaited<ReturnType<typeof startOtlpReceiver>>,
  variant: string,
  round: number,
): Promise<Run> {
  await fetch(`${sinkAdmin}/reset`, { method: "POST" });
  const pids = stack.pids();
  const cpu0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
  const bytes0 = otlp.bytes();
  const rss = peakRss(pids);
  const t0 = Date.now();
  const res = await api("POST", "/v1/push/send", {
    app_id: appId,
    name: "bench",
    contents: { en: { title: "Bench" } },
  });
  if (res.status !== 201) throw new Error(`send: ${res.text}`);
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (Date.now() > deadline) {
      const logs = stack.processes.map((p) => `[${p.name}] ${p.output.join("").slice(-1500)}`).join("\n");
      throw new Error(`the ${variant} campaign did not complete in 300 s:\n${logs}`);
    }
    const c = await api("GET", `/v1/campaigns/${res.body.id}`);
    if (c.body.status === "completed") {
      if (c.body.stats.delivered !== DEVICES) throw new Error(`delivered ${c.body.stats.delivered} of ${DEVICES}`);
      break;
    }
    if (c.body.status === "failed") throw new Error("the campaign failed");
    await new Promise((r) => setTimeout(r, 50));
  }
  const seconds = (Date.now() - t0) / 1000;
  const peaks = rss.stop();
  const sink = (await (await fetch(`${sinkAdmin}/count`)).json()) as { count: number; firstAt: number };
  // Let the batch span processors flush before the bytes are read.
  if (variant.includes("100")) await new Promise((r) => setTimeout(r, 6_000));
  const cpu = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid) - cpu0[n]!]));
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  return {
    variant,
    round,
    seconds,
    perSecond: DEVICES / seconds,
    firstDeliveryMs: sink.firstAt - t0,
    cpuSeconds: cpu,
    cpuPer10k: (total / DEVICES) * 10_000,
    peakRssMb: peaks,
    spanBytes: otlp.bytes() - bytes0,
  };
}

function report(runs: Run[]) {
  const rows = VARIANTS.map((v) => {
    const rs = runs.filter((r) => r.variant === v.name);
    return {
      variant: v.name,
      perSecond: median(rs.map((r) => r.perSecond)),
      cpuPer10k: median(rs.map((r) => r.cpuPer10k)),
      firstDeliveryMs: median(rs.map((r) => r.firstDeliveryMs)),
      spanKbPer10k: median(rs.map((r) => (r.spanBytes / DEVICES) * 10)),
      peakRssMb: Object.fromEntries(ROLES.map((role) => [role, Math.max(...rs.map((r) => r.peakRssMb[role] ?? 0))])),
    };
  });
  const off = rows[0]!;
  const unsampled = rows.find((r) => r.variant.includes("not sampled"));
  const sampled = rows.find((r) => r.variant.includes("100"));
  // At a ratio sampler a send is traced whole or not at all: 10 % costs 0.9 × unsampled + 0.1 × sampled.
  const tenth =
    unsampled && sampled
      ? {
          variant: "tracing on, 10 % sampled (0.9 × not sampled + 0.1 × 100 %)",
          cpuPer10k: 0.9 * unsampled.cpuPer10k + 0.1 * sampled.cpuPer10k,
          perSecond: 1 / (0.9 / unsampled.perSecond + 0.1 / sampled.perSecond),
        }
      : undefined;
  const lines = [
    `## End to end: ${DEVICES.toLocaleString("en")} iOS devices, POST /v1/push/send → completed`,
    "",
    `Built processes (gateway, credential, device-registry, campaign, sender-apns) on Node ${process.version}, ` +
      `lean APNs sink in its own process, ${ROUNDS} interleaved round(s), medians. ${os.cpus().length} cores.`,
    "",
    "| variant | notifications/s | ratio to off | CPU s per 10k (Herald) | CPU ratio | first delivery ms | OTLP kB per 10k |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.variant} | ${Math.round(r.perSecond)} | ${(r.perSecond / off.perSecond).toFixed(2)} | ${r.cpuPer10k.toFixed(2)} | ` +
        `${(r.cpuPer10k / off.cpuPer10k).toFixed(2)} | ${Math.round(r.firstDeliveryMs)} | ${Math.round(r.spanKbPer10k)} |`,
    ),
    ...(tenth
      ? [
          `| ${tenth.variant} | ${Math.round(tenth.perSecond)} | ${(tenth.perSecond / off.perSecond).toFixed(2)} | ` +
            `${tenth.cpuPer10k.toFixed(2)} | ${(tenth.cpuPer10k / off.cpuPer10k).toFixed(2)} | | |`,
        ]
      : []),
    "",
    "Peak RSS per process (MB, max over rounds):",
    "",
    `| variant | ${ROLES.join(" | ")} |`,
    `|---|${ROLES.map(() => "---:").join("|")}|`,
    ...rows.map((r) => `| ${r.variant} | ${ROLES.map((role) => Math.round(r.peakRssMb[role] ?? 0)).join(" | ")} |`),
  ];
  const table = lines.join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    `e2e-ios-tracing${QUICK ? "-quick" : ""}`,
    { devices: DEVICES, rounds: ROUNDS, node: process.version, runs, rows, tenth },
    table,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench: ${(err as Error).stack ?? err}`);
    process.exit(1);
  },
);
