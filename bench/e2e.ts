import { type ChildProcess, spawn } from "node:child_process";
import { createECDH, randomBytes } from "node:crypto";
import { DEFAULT_PORTS, heraldProcesses, SOURCE_NODE_ARGS } from "../scripts/processes.mjs";
import { apnsPlatformConfig, makeApnsKey, makeServiceAccount } from "../test/support/credential-fixtures.js";
import type { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { seedRegistryDevices } from "../test/support/registry-seed.js";
import { freePort, restClient } from "../test/support/stack.js";
import { untilServing } from "../test/support/wait.js";
import {
  CORES,
  cpuBound,
  LATENCY_MS,
  MAX_STREAMS,
  median,
  option,
  QUICK,
  ROUNDS,
  root,
  text,
  writeResult,
} from "./common.js";
import { type BuiltStack, startBuiltStack } from "./herald-stack.js";
import { runPeerChild } from "./peer-child.js";
import { cpuOfNamed, cpuSeconds, INFRA_PROCESSES, peakRss } from "./proc-stats.js";

// End to end: campaigns from `POST /v1/push/send` to `completed`, delivered to a lean
// sink of all three push services in its own process (bench/push-sink.ts). Parts:
// - platforms: iOS, Android, web and mixed audiences of --devices (100,000; 5,000 quick);
// - scale: iOS at --devices vs --large (1,000,000; skipped quick; --large-rounds, default 1):
//   cost per notification and peak RSS should stay flat;
// - replicas: iOS with one vs two sender-apns replicas;
// - tracing: iOS at --tracing-devices (50,000) with tracing off, on but not sampled, and
//   every span exported;
// - memory: iOS at --tracing-devices delivered to the provider simulator (the memory target
//   counts the stack with the simulator).
// --parts platforms,scale,replicas,tracing picks some; --only <text> filters the variants.

const DEVICES = option("devices", QUICK ? 5_000 : 100_000);
const LARGE = option("large", QUICK ? 0 : 1_000_000);
const LARGE_ROUNDS = option("large-rounds", 1);
const TRACING_DEVICES = option("tracing-devices", QUICK ? 5_000 : 50_000);
const PARTS = text("parts", "platforms,scale,replicas,tracing,memory").split(",");
const ONLY = text("only", "");
export const ROLES = [
  "credential",
  "device-registry",
  "campaign",
  "sender-apns",
  "sender-fcm",
  "sender-webpush",
  "webhooks",
  "gateway",
] as const;

export interface E2eContext {
  releaseDir: string;
  env: Record<string, string>;
  apiKey: string;
  databaseUrl: string;
  otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
}

export type Mix = "ios" | "android" | "web" | "mixed";

interface Variant {
  part: string;
  name: string;
  mix: Mix;
  devices: number;
  env?: (otlp: string) => Record<string, string>;
  replicas?: Record<string, number>;
  /** Not Herald: @parse/node-apn sending the same number of notifications straight to the sink. */
  peer?: boolean;
  /** Delivered to the provider simulator instead of the sink: the stack with its stand-in for Apple, for its memory. */
  simulator?: boolean;
}

interface Run {
  part: string;
  variant: string;
  round: number;
  devices: number;
  seconds: number;
  perSecond: number;
  firstDeliveryMs: number;
  p50Ms: number;
  p99Ms: number;
  duplicates: number;
  cpuSeconds: Record<string, number>;
  cpuPer10k: number;
  /** NATS, PostgreSQL and Redis (the machine's shared servers) over the run. */
  infraCpuPer10k: number;
  /** The push sink over the run. */
  sinkCpuPer10k: number;
  sinkRssMb: number;
  peakRssMb: Record<string, number>;
  /** Peak of the Herald processes' and the receiver's RSS summed at each sample (not for node-apn). */
  togetherRssMb?: number;
  /** The same for their PSS (shared pages counted once); memory row only. */
  togetherPssMb?: number;
  spanBytes: number;
  /** Scale rows: the campaign's receipts exported as CSV through the gateway, after completion. */
  export?: { seconds: number; rows: number; megabytes: number; gatewayPeakRssMb: number };
}

export interface Sink {
  port: number;
  tokenPort: number;
  admin: string;
  child: ChildProcess;
}

interface SinkCount {
  count: number;
  firstAt: number;
  p50At: number;
  p99At: number;
}

function variants(): Variant[] {
  const all: Variant[] = [];
  if (PARTS.includes("platforms")) {
    for (const mix of ["ios", "android", "web", "mixed"] as const) {
      all.push({ part: "platforms", name: `${mix}, ${DEVICES.toLocaleString("en")}`, mix, devices: DEVICES });
    }
    all.push({
      part: "platforms",
      name: `@parse/node-apn direct, ios ${DEVICES.toLocaleString("en")}`,
      mix: "ios",
      devices: DEVICES,
      peer: true,
    });
  }
  if (PARTS.includes("scale") && LARGE > 0) {
    if (!PARTS.includes("platforms")) {
      all.push({ part: "scale", name: `ios, ${DEVICES.toLocaleString("en")}`, mix: "ios", devices: DEVICES });
    }
    all.push({ part: "scale", name: `ios, ${LARGE.toLocaleString("en")}`, mix: "ios", devices: LARGE });
  }
  if (PARTS.includes("replicas")) {
    all.push({
      part: "replicas",
      name: `ios, ${DEVICES.toLocaleString("en")}, 2 × sender-apns`,
      mix: "ios",
      devices: DEVICES,
      replicas: { "sender-apns": 2 },
    });
  }
  if (PARTS.includes("tracing")) {
    const n = TRACING_DEVICES.toLocaleString("en");
    all.push(
      { part: "tracing", name: `tracing off, ios ${n}`, mix: "ios", devices: TRACING_DEVICES },
      {
        part: "tracing",
        name: `tracing on, send not sampled, ios ${n}`,
        mix: "ios",
        devices: TRACING_DEVICES,
        env: (otlp) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_TRACES_SAMPLER: "parentbased_always_off" }),
      },
      {
        part: "tracing",
        name: `tracing on, 100 % sampled, ios ${n}`,
        mix: "ios",
        devices: TRACING_DEVICES,
        env: (otlp) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_TRACES_SAMPLER: "parentbased_always_on" }),
      },
    );
  }
  if (PARTS.includes("memory")) {
    const n = TRACING_DEVICES.toLocaleString("en");
    all.push({
      part: "memory",
      name: `ios ${n}, provider simulator`,
      mix: "ios",
      devices: TRACING_DEVICES,
      simulator: true,
    });
  }
  return all.filter((v) => v.name.includes(ONLY));
}

/** Where a campaign's notifications arrive: the sink, or the provider simulator (which reports no arrival times). */
interface Receiver {
  pid: number;
  reset(): Promise<void>;
  count(): Promise<SinkCount | undefined>;
}

const sinkReceiver = (sink: Sink): Receiver => ({
  pid: sink.child.pid!,
  reset: async () => void (await fetch(`${sink.admin}/reset`, { method: "POST" })),
  count: async () => (await (await fetch(`${sink.admin}/count`)).json()) as SinkCount,
});

/**
 * services/provider-sim, built like the Herald processes (its dist/, which the release's
 * build compiled; under tsx it holds some 16 MB more), with dev mode's NODE_OPTIONS, on
 * free ports, faults off.
 */
interface Simulator {
  url: string;
  child: ChildProcess;
  receiver: Receiver;
  /** Makes the simulator know an APNs key (it refuses tokens signed by keys it does not know). */
  trust(key: ReturnType<typeof makeApnsKey>, bundle: string): Promise<void>;
}

async function startSimulator(): Promise<Simulator> {
  const [port, adminPort] = [await freePort(), await freePort()];
  // Its dev-mode definition (environment, NODE_OPTIONS) on other ports, its source's build.
  const def = heraldProcesses({ ...DEFAULT_PORTS, providerSim: port, providerSimAdmin: adminPort }).find(
    (p) => p.name === "provider-sim",
  )!;
  const child = spawn(process.execPath, def.built, {
    cwd: root,
    env: {
      ...process.env,
      ...def.env,
      NODE_OPTIONS: [def.env.NODE_OPTIONS, process.env.BENCH_NODE_OPTIONS].filter(Boolean).join(" "),
      SIM_SEED: "1",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  try {
    await untilServing(child, "the provider simulator", `${admin}/healthz`, { timeoutMs: 20_000 });
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  const receiver: Receiver = {
    pid: child.pid!,
    reset: async () => void (await fetch(`${admin}/admin/deliveries`, { method: "DELETE" })),
    count: async () => undefined,
  };
  const trust = async (key: ReturnType<typeof makeApnsKey>, bundle: string) => {
    const body = { team_id: key.teamId, key_id: key.keyId, p8: key.p8, topics: [bundle] };
    const res = await fetch(`${admin}/admin/apns/keys`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`simulator key: ${res.status} ${await res.text()}`);
  };
  return { url: `https://127.0.0.1:${port}`, child, receiver, trust };
}

/** The push sink (bench/push-sink.ts), answering `--latency` ms away with `--max-streams` streams by default. */
export async function startSink(opts: { latencyMs?: number; maxStreams?: number } = {}): Promise<Sink> {
  const [port, adminPort, tokenPort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, "bench/push-sink.ts"], {
    cwd: root,
    env: {
      ...process.env,
      SINK_PORT: String(port),
      SINK_ADMIN_PORT: String(adminPort),
      SINK_TOKEN_PORT: String(tokenPort),
      SINK_LATENCY_MS: String(opts.latencyMs ?? LATENCY_MS),
      SINK_MAX_STREAMS: String(opts.maxStreams ?? MAX_STREAMS),
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  await untilServing(child, "the push sink", `${admin}/count`, { timeoutMs: 10_000 });
  return { port, tokenPort, admin, child };
}

/**
 * The benchmark's audience, straight into the registry's table (registering them is the
 * ingest benchmark), platforms in turn for a mixed audience. Web subscriptions point at the
 * sink and share one valid P-256 key (each still gets its own encryption: the salt and
 * sender key are fresh).
 */
export async function seedDevices(databaseUrl: string, appId: string, mix: Mix, n: number, sinkPort: number) {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const p256dh = ecdh.getPublicKey().toString("base64url");
  const platforms = mix === "mixed" ? (["ios", "android", "web"] as const) : ([mix] as const);
  const token = (platform: string, i: number) => {
    if (platform === "ios") return randomBytes(32).toString("hex");
    if (platform === "android")
      return `${randomBytes(8).toString("base64url")}:APA91b${randomBytes(110).toString("base64url")}`.slice(0, 163);
    return JSON.stringify({
      endpoint: `https://127.0.0.1:${sinkPort}/wp/${appId}-${i}`,
      keys: { p256dh, auth: randomBytes(16).toString("base64url") },
    });
  };
  function* devices() {
    for (let i = 0; i < n; i++) {
      const platform = platforms[i % platforms.length]!;
      yield { platform, token: token(platform, i) };
    }
  }
  await seedRegistryDevices(databaseUrl, "device_registry", appId, devices());
}

/** An app with the platforms of `mix` configured (credentials the sink accepts; the simulator once it trusts the key). */
export async function createApp(
  api: ReturnType<typeof restClient>,
  mix: Mix,
  devices: number,
  trust?: Simulator["trust"],
): Promise<string> {
  // One app per audience and receiver: the simulator's app has a bundle of its own.
  const bundle = `com.example.bench.${mix}${devices}${trust ? ".simulator" : ""}`;
  const app = await api("POST", "/v1/apps", { name: `Bench ${mix} ${devices}`, platform: "ios", bundle_id: bundle });
  if (app.status !== 201) throw new Error(`create app: ${app.text}`);
  const appId = app.body.id as string;
  const configure = async (body: Record<string, unknown>) => {
    const res = await api("POST", `/v1/apps/${appId}/platform-config`, body);
    if (res.status !== 200) throw new Error(`platform config: ${res.text}`);
  };
  if (mix === "ios" || mix === "mixed") {
    const key = makeApnsKey();
    await trust?.(key, bundle);
    await configure(apnsPlatformConfig(key, bundle, "production"));
  }
  if (mix === "android" || mix === "mixed") {
    const account = makeServiceAccount({ tokenUri: "https://oauth2.googleapis.com/token" });
    await configure({ platform: "android", fcm_service_account: JSON.parse(account.json) });
  }
  if (mix === "web" || mix === "mixed") {
    await configure({ platform: "web", vapid_subject: "mailto:ops@example.com" });
  }
  return appId;
}

export async function e2e(ctx: E2eContext): Promise<void> {
  const chosen = variants();
  if (chosen.length === 0) return;
  const sink = await startSink();
  const sinkUrl = `https://127.0.0.1:${sink.port}`;
  const providers = { APNS_URL: sinkUrl, FCM_URL: sinkUrl, FCM_TOKEN_URL: `https://127.0.0.1:${sink.tokenPort}/token` };
  const env = { ...ctx.env, HERALD_WEBPUSH_ALLOW_PRIVATE: "true" };
  /** One app per audience (mix and size), created and seeded on first use. */
  const apps = new Map<string, string>();
  const runs: Run[] = [];
  let simulator: Simulator | undefined;
  console.log(`e2e: ${chosen.length} variant(s), ${ROUNDS} round(s)`);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved: each round starts with the next variant.
      const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]!);
      for (const variant of order) {
        // A 1,000,000-device round takes minutes: one unless --large-rounds asks for more.
        if (variant.devices === LARGE && round >= LARGE_ROUNDS) continue;
        if (variant.peer) {
          const run = await nodeApnDirect(sink, variant, round, ctx.env.NODE_EXTRA_CA_CERTS ?? "");
          runs.push(run);
          console.log(`  round ${round + 1} ${variant.name.padEnd(42)} ${Math.round(run.perSecond)}/s`);
          continue;
        }
        // One simulator for every round, as one sink: the apps' keys are trusted once.
        if (variant.simulator) simulator ??= await startSimulator();
        const sim = variant.simulator ? simulator : undefined;
        const stack = await startBuiltStack({
          releaseDir: ctx.releaseDir,
          roles: [...ROLES],
          providers: sim ? { ...providers, APNS_URL: sim.url } : providers,
          env: { ...env, ...variant.env?.(ctx.otlp.url) },
          ...(variant.replicas ? { replicas: variant.replicas } : {}),
          label: `${variant.name} round ${round + 1}`,
        });
        try {
          const api = restClient(stack.gatewayUrl, ctx.apiKey);
          const audience = `${variant.mix}:${variant.devices}${sim ? ":simulator" : ""}`;
          let appId = apps.get(audience);
          if (!appId) {
            appId = await createApp(api, variant.mix, variant.devices, sim?.trust);
            await seedDevices(ctx.databaseUrl, appId, variant.mix, variant.devices, sink.port);
            apps.set(audience, appId);
          }
          const receiver = sim ? sim.receiver : sinkReceiver(sink);
          const run = await runCampaign(stack, api, appId, receiver, ctx.otlp, variant, round, ctx.apiKey);
          runs.push(run);
          console.log(
            `  round ${round + 1} ${variant.name.padEnd(42)} ${Math.round(run.perSecond)}/s, ` +
              `CPU ${run.cpuPer10k.toFixed(2)} s per 10k, first ${ms(run.firstDeliveryMs)} ms, ` +
              `p50 ${ms(run.p50Ms)} ms, p99 ${ms(run.p99Ms)} ms`,
          );
        } finally {
          await stack.stop();
        }
      }
    }
    report(chosen, runs);
  } finally {
    sink.child.kill("SIGTERM");
    simulator?.child.kill("SIGTERM");
  }
}

/**
 * The peer of the iOS row: node-apn (bench/peer-apns.ts, its own process) sending as many
 * notifications straight to the same sink, to distinct tokens, as node-apn is used: `send(note, tokens)` (its
 * one connection carries as many streams as the sink allows), after a warm-up.
 */
async function nodeApnDirect(sink: Sink, variant: Variant, round: number, ca: string): Promise<Run> {
  const receiver = sinkReceiver(sink);
  await receiver.reset();
  const key = makeApnsKey();
  const watch = watchAround(receiver);
  let t0 = 0;
  const done = await runPeerChild(
    "bench/peer-apns.ts",
    {
      host: "127.0.0.1",
      port: sink.port,
      p8: key.p8,
      keyId: key.keyId,
      teamId: key.teamId,
      topic: "com.example.bench.peer",
      // Distinct tokens, as an audience has (bench/peer-apns.ts), and a warm-up to others.
      seed: randomBytes(4).toString("hex"),
      n: variant.devices,
      warm: Math.min(2_000, variant.devices),
      title: "Bench",
      body: "",
    },
    { NODE_EXTRA_CA_CERTS: ca },
    "node-apn",
    async () => {
      // The peer's warm-up reached the sink too.
      await receiver.reset();
      t0 = Date.now();
    },
  );
  if (done.ok !== variant.devices)
    throw new Error(`node-apn sent ${done.ok} of ${variant.devices}: ${done.firstError}`);
  const counted = (await receiver.count())!;
  return {
    ...watch.stop(variant.devices),
    part: variant.part,
    variant: variant.name,
    round,
    devices: variant.devices,
    seconds: done.seconds,
    perSecond: variant.devices / done.seconds,
    firstDeliveryMs: counted.firstAt - t0,
    p50Ms: counted.p50At - t0,
    p99Ms: counted.p99At - t0,
    duplicates: counted.count - variant.devices,
    cpuSeconds: { "node-apn": done.cpuSeconds },
    cpuPer10k: (done.cpuSeconds / variant.devices) * 10_000,
    peakRssMb: done.rss,
    spanBytes: 0,
  };
}

/** What a run costs outside the measured side: the shared servers' CPU and the receiver's CPU and memory. */
function watchAround(receiver: Receiver) {
  const infra = cpuOfNamed(INFRA_PROCESSES);
  const sinkPid = receiver.pid;
  const sinkCpu0 = cpuSeconds(sinkPid);
  const sinkRss = peakRss({ sink: sinkPid });
  return {
    stop(devices: number) {
      return {
        infraCpuPer10k: (infra.stop() / devices) * 10_000,
        sinkCpuPer10k: ((cpuSeconds(sinkPid) - sinkCpu0) / devices) * 10_000,
        sinkRssMb: sinkRss.stop().sink ?? 0,
      };
    },
  };
}

/** GET …/deliveries/export?format=csv read to the end: its time, rows, size and the gateway's peak RSS meanwhile. */
async function exportReceipts(
  stack: BuiltStack,
  apiKey: string,
  campaignId: string,
  devices: number,
): Promise<Run["export"]> {
  const gateway = stack.pids().gateway!;
  const rss = peakRss({ gateway }, 100);
  const t0 = Date.now();
  const res = await fetch(`${stack.gatewayUrl}/v1/campaigns/${campaignId}/deliveries/export?format=csv`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
  let rows = -1;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) rows++;
  }
  const seconds = (Date.now() - t0) / 1000;
  if (rows !== devices) throw new Error(`export: ${rows} rows of ${devices}`);
  const { gateway: peak } = rss.stop();
  return { seconds, rows, megabytes: bytes / 2 ** 20, gatewayPeakRssMb: peak ?? 0 };
}

async function runCampaign(
  stack: BuiltStack,
  api: ReturnType<typeof restClient>,
  appId: string,
  receiver: Receiver,
  otlp: E2eContext["otlp"],
  variant: Variant,
  round: number,
  apiKey: string,
): Promise<Run> {
  await receiver.reset();
  const pids = stack.pids();
  const cpu0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
  const bytes0 = otlp.bytes();
  // The receiver too, for the stack's RSS at one moment; its own peak comes from watchAround.
  const rss = peakRss({ ...pids, receiver: receiver.pid }, 100, { pss: variant.part === "memory" });
  const watch = watchAround(receiver);
  const t0 = Date.now();
  const res = await api("POST", "/v1/push/send", {
    app_id: appId,
    name: "bench",
    contents: { en: { title: "Bench" } },
  });
  if (res.status !== 201) throw new Error(`send: ${res.text}`);
  const limitMs = Math.max(300_000, variant.devices * 2);
  const pollMs = variant.devices > 200_000 ? 250 : 50;
  for (;;) {
    if (Date.now() - t0 > limitMs) {
      const logs = stack.recentOutput();
      throw new Error(`the ${variant.name} campaign did not complete in ${limitMs / 1000} s:\n${logs}`);
    }
    const c = await api("GET", `/v1/campaigns/${res.body.id}`);
    if (c.body.status === "completed") {
      if (c.body.stats.delivered !== variant.devices) {
        const logs = stack.recentOutput();
        throw new Error(
          `${variant.name}: delivered ${c.body.stats.delivered} of ${variant.devices}: ${c.text}\n${logs}`,
        );
      }
      break;
    }
    if (c.body.status === "failed") throw new Error(`the ${variant.name} campaign failed`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
  const seconds = (Date.now() - t0) / 1000;
  const { receiver: _, ...peaks } = rss.stop();
  // The simulator reports no arrival times: its row has no latencies (NaN) and relies on the campaign's count.
  const counted = (await receiver.count()) ?? {
    count: variant.devices,
    firstAt: Number.NaN,
    p50At: Number.NaN,
    p99At: Number.NaN,
  };
  // Let the batch span processors flush before the bytes are read.
  if (variant.name.includes("100 %")) await new Promise((r) => setTimeout(r, 6_000));
  const cpu = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid) - cpu0[n]!]));
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  const exported =
    variant.part === "scale" ? await exportReceipts(stack, apiKey, res.body.id, variant.devices) : undefined;
  return {
    ...(exported ? { export: exported } : {}),
    ...watch.stop(variant.devices),
    part: variant.part,
    variant: variant.name,
    round,
    devices: variant.devices,
    seconds,
    perSecond: variant.devices / seconds,
    firstDeliveryMs: counted.firstAt - t0,
    p50Ms: counted.p50At - t0,
    p99Ms: counted.p99At - t0,
    duplicates: counted.count - variant.devices,
    cpuSeconds: cpu,
    cpuPer10k: (total / variant.devices) * 10_000,
    peakRssMb: peaks,
    togetherRssMb: rss.together(),
    togetherPssMb: rss.togetherPss(),
    spanBytes: otlp.bytes() - bytes0,
  };
}

interface Row {
  part: string;
  variant: string;
  devices: number;
  perSecond: number;
  seconds: number;
  firstDeliveryMs: number;
  p50Ms: number;
  p99Ms: number;
  duplicates: number;
  cpuPer10k: number;
  /** Per process. */
  cpuPer10kBy: Record<string, number>;
  infraCpuPer10k: number;
  sinkCpuPer10k: number;
  sinkRssMb: number;
  spanKbPer10k: number;
  peakRssMb: Record<string, number>;
  togetherRssMb: number;
  togetherPssMb: number;
}

const rss = (r: Row, names: readonly string[]) => names.map((n) => Math.round(r.peakRssMb[n] ?? 0));
const ms = (v: number) => (Number.isNaN(v) ? "—" : String(Math.round(v)));
const totalRss = (r: Row) => Math.round(Object.values(r.peakRssMb).reduce((a, b) => a + b, 0));

function report(chosen: Variant[], runs: Run[]) {
  const rows: Row[] = chosen.map((v) => {
    const rs = runs.filter((r) => r.variant === v.name);
    const processes = [...new Set(rs.flatMap((r) => Object.keys(r.peakRssMb)))];
    return {
      part: v.part,
      variant: v.name,
      devices: v.devices,
      perSecond: median(rs.map((r) => r.perSecond)),
      seconds: median(rs.map((r) => r.seconds)),
      firstDeliveryMs: median(rs.map((r) => r.firstDeliveryMs)),
      p50Ms: median(rs.map((r) => r.p50Ms)),
      p99Ms: median(rs.map((r) => r.p99Ms)),
      duplicates: Math.max(...rs.map((r) => r.duplicates)),
      cpuPer10k: median(rs.map((r) => r.cpuPer10k)),
      cpuPer10kBy: Object.fromEntries(
        processes.map((p) => [p, median(rs.map((r) => ((r.cpuSeconds[p] ?? 0) / v.devices) * 10_000))]),
      ),
      infraCpuPer10k: median(rs.map((r) => r.infraCpuPer10k)),
      sinkCpuPer10k: median(rs.map((r) => r.sinkCpuPer10k)),
      sinkRssMb: Math.max(...rs.map((r) => r.sinkRssMb)),
      spanKbPer10k: median(rs.map((r) => (r.spanBytes / v.devices) * 10)),
      peakRssMb: Object.fromEntries(processes.map((p) => [p, Math.max(...rs.map((r) => r.peakRssMb[p] ?? 0))])),
      togetherRssMb: Math.max(...rs.map((r) => r.togetherRssMb ?? Number.NaN)),
      togetherPssMb: Math.max(...rs.map((r) => r.togetherPssMb ?? Number.NaN)),
    };
  });
  const lines = [
    "## End to end: POST /v1/push/send → completed",
    "",
    `Built processes (${ROLES.join(", ")}) on Node ${process.version}, a lean sink of all three push services ` +
      `in its own process (bench/push-sink.ts) answering ${LATENCY_MS} ms away (± 10 %) with ${MAX_STREAMS} streams ` +
      `per connection, ${ROUNDS} interleaved round(s), medians, ${CORES} cores. ` +
      "Latencies are from the POST to the sink's receipt of a notification: the first, the median and the 99th percentile. " +
      "CPU is that of the Herald processes (node-apn's process on its row); infra CPU that of NATS, PostgreSQL and " +
      "Redis over the same time; receiver CPU that of the push sink (of the provider simulator on the memory row, " +
      "which reports no arrival times). Peak RSS is the sum of the Herald processes' peaks; with the receiver, " +
      "that sum plus the sink's or the simulator's peak; at one moment, the peak of the Herald processes' and the " +
      "receiver's RSS summed at each 100 ms sample (the stack's worst moment; max over rounds like the others).",
    "",
    "| part | audience | notifications/s | seconds | first delivery ms | p50 ms | p99 ms | CPU s per 10k | infra CPU s per 10k | receiver CPU s per 10k | peak RSS MB | with the receiver | at one moment | duplicates |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.part} | ${r.variant} | ${Math.round(r.perSecond)} | ${r.seconds.toFixed(1)} | ${ms(r.firstDeliveryMs)} | ` +
        `${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${r.cpuPer10k.toFixed(2)} | ${r.infraCpuPer10k.toFixed(2)} | ` +
        `${r.sinkCpuPer10k.toFixed(2)} | ${totalRss(r)} | ${totalRss(r) + Math.round(r.sinkRssMb)} | ${ms(r.togetherRssMb)} | ${r.duplicates} |`,
    ),
  ];
  const processes = [...new Set(rows.flatMap((r) => Object.keys(r.peakRssMb)))];
  lines.push(
    "",
    "Peak RSS per process (MB, max over rounds):",
    "",
    `| audience | ${processes.join(" | ")} |`,
    `|---|${processes.map(() => "---:").join("|")}|`,
    ...rows.map((r) => `| ${r.variant} | ${rss(r, processes).join(" | ")} |`),
  );
  const scale = rows.filter((r) => (r.part === "platforms" || r.part === "scale") && r.variant.startsWith("ios, "));
  const small = scale.find((r) => r.devices === DEVICES);
  const large = scale.find((r) => r.devices === LARGE);
  if (small && large) {
    lines.push(
      "",
      `Scale, iOS ${DEVICES.toLocaleString("en")} → ${LARGE.toLocaleString("en")}: ` +
        `CPU per 10k × ${(large.cpuPer10k / small.cpuPer10k).toFixed(2)}, ` +
        `campaign service peak RSS × ${((large.peakRssMb.campaign ?? 0) / (small.peakRssMb.campaign ?? 1)).toFixed(2)} ` +
        "(targets ≤ 1.3), " +
        `${LARGE.toLocaleString("en")} devices in ${large.seconds.toFixed(0)} s (target ≤ 120 s).`,
    );
  }
  for (const r of runs.filter((x) => x.export)) {
    const e = r.export!;
    lines.push(
      "",
      `Receipts of the ${r.variant} campaign (round ${r.round + 1}) exported as CSV through the gateway: ` +
        `${e.rows.toLocaleString("en")} rows, ${e.megabytes.toFixed(1)} MB in ${e.seconds.toFixed(1)} s ` +
        `(target for 1,000,000: ≤ 30 s), gateway peak RSS ${Math.round(e.gatewayPeakRssMb)} MB.`,
    );
  }
  const peer = rows.find((r) => r.variant.startsWith("@parse/node-apn"));
  const iosRow = rows.find((r) => r.part === "platforms" && r.variant.startsWith("ios, "));
  if (peer && iosRow) {
    lines.push(
      "",
      `Herald end to end (iOS, ${DEVICES.toLocaleString("en")}) ÷ @parse/node-apn sending directly: ` +
        `× ${(iosRow.perSecond / peer.perSecond).toFixed(2)} notifications/s (target ≥ 1.0), ` +
        `CPU per 10k × ${(iosRow.cpuPer10k / peer.cpuPer10k).toFixed(2)}.`,
    );
    // The pipeline's CPU that no sender can save: every Herald process but the senders, and the shared servers.
    const senders = Object.keys(iosRow.cpuPer10kBy).filter((n) => n.startsWith("sender-"));
    const senderPer10k = senders.reduce((n, name) => n + (iosRow.cpuPer10kBy[name] ?? 0), 0);
    const rest = iosRow.cpuPer10k - senderPer10k + iosRow.infraCpuPer10k;
    const ceiling = cpuBound(rest + iosRow.sinkCpuPer10k, 10_000);
    lines.push(
      "",
      `What a faster sender could reach: per 10k notifications the rest of the pipeline (gateway, campaign, registry, ` +
        `credential, NATS, PostgreSQL, Redis) spends ${rest.toFixed(2)} CPU s and the sink ${iosRow.sinkCpuPer10k.toFixed(2)} s; ` +
        `with a sender that cost nothing, ${CORES} cores would carry at most ${Math.round(ceiling)}/s ` +
        `(× ${(ceiling / peer.perSecond).toFixed(2)} node-apn direct, which needs ${peer.cpuPer10k.toFixed(2)} s of its own ` +
        `and ${peer.sinkCpuPer10k.toFixed(2)} s of the sink's).`,
    );
  }
  const memory = rows.find((r) => r.part === "memory");
  if (memory) {
    lines.push(
      "",
      `Whole stack during the ${memory.devices.toLocaleString("en")}-device iOS campaign, provider simulator included: ` +
        `${ms(memory.togetherRssMb)} MB peak RSS at one moment (target ≤ 900 MB); the sum of each process's own ` +
        `peak, reached at different moments, ${totalRss(memory) + Math.round(memory.sinkRssMb)} MB: the seven ` +
        `Herald processes ${totalRss(memory)} MB, the simulator ${Math.round(memory.sinkRssMb)} MB. RSS counts ` +
        `in every process the pages they share, mostly the Node binary's code (some 50 MB resident in each); ` +
        `counted once (proportional set size, summed at each sample), the stack peaked at ${ms(memory.togetherPssMb)} MB.`,
    );
  }
  const two = rows.find((r) => r.part === "replicas");
  if (small && two) {
    lines.push(
      "",
      `Two sender-apns replicas vs one: × ${(two.perSecond / small.perSecond).toFixed(2)} notifications/s.`,
    );
  }
  const off = rows.find((r) => r.variant.startsWith("tracing off"));
  const unsampled = rows.find((r) => r.variant.includes("not sampled"));
  const sampled = rows.find((r) => r.variant.includes("100 %"));
  if (off && unsampled && sampled) {
    // At a ratio sampler a send is traced whole or not at all: 10 % costs 0.9 × unsampled + 0.1 × sampled.
    const tenthCpu = 0.9 * unsampled.cpuPer10k + 0.1 * sampled.cpuPer10k;
    const tenthRate = 1 / (0.9 / unsampled.perSecond + 0.1 / sampled.perSecond);
    lines.push(
      "",
      "Tracing (ratios to tracing off):",
      "",
      "| variant | notifications/s ratio | CPU ratio | OTLP kB per 10k |",
      "|---|---:|---:|---:|",
      ...[unsampled, sampled].map(
        (r) =>
          `| ${r.variant} | ${(r.perSecond / off.perSecond).toFixed(2)} | ${(r.cpuPer10k / off.cpuPer10k).toFixed(2)} | ` +
          `${Math.round(r.spanKbPer10k)} |`,
      ),
      `| 10 % sampled (0.9 × not sampled + 0.1 × 100 %) | ${(tenthRate / off.perSecond).toFixed(2)} | ` +
        `${(tenthCpu / off.cpuPer10k).toFixed(2)} | |`,
    );
  }
  const table = lines.join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    `e2e${LATENCY_MS > 0 ? `-${LATENCY_MS}ms` : ""}${QUICK ? "-quick" : ""}`,
    { rounds: ROUNDS, node: process.version, latencyMs: LATENCY_MS, maxStreams: MAX_STREAMS, runs, rows },
    table,
  );
}
