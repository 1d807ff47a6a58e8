import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { SOURCE_NODE_ARGS } from "../scripts/processes.mjs";
import { makeApnsKey } from "../test/support/credential-fixtures.js";
import type { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { freePort, restClient } from "../test/support/stack.js";
import { median, option, QUICK, ROUNDS, root, text, writeResult } from "./common.js";
import { type BuiltStack, startBuiltStack } from "./herald-stack.js";
import { cpuSeconds, peakRss } from "./proc-stats.js";

// End to end: an iOS campaign from `POST /v1/push/send` to `completed`, delivered to a lean
// APNs sink in its own process, with tracing off, with the SDK on but the send not sampled,
// and with every span recorded and exported (100 %).

const DEVICES = option("devices", QUICK ? 5_000 : 50_000);
const ROLES = ["credential", "device-registry", "campaign", "sender-apns", "gateway"];

export interface E2eContext {
  releaseDir: string;
  env: Record<string, string>;
  apiKey: string;
  databaseUrl: string;
  otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
}

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
const only = text("only", "");
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

export async function e2e(ctx: E2eContext): Promise<void> {
  const { releaseDir, env, apiKey, databaseUrl, otlp } = ctx;
  const sink = await startSink();
  const providers = { APNS_URL: `https://127.0.0.1:${sink.port}` };
  let appId: string | undefined;
  const runs: Run[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
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
    report(runs);
  } finally {
    sink.child.kill("SIGTERM");
  }
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
