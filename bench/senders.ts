import { createECDH, createPrivateKey, randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Platform } from "@herald/proto/common";
import { CredentialService } from "@herald/proto/credential";
import {
  type DeliveryBatch,
  DeliveryBatchSchema,
  OutcomeBatchSchema,
  OutcomeKind,
  RenderedPayloadSchema,
} from "@herald/proto/delivery";
import { createRpcClient, streamNames } from "@herald/runtime";
import webpush from "web-push";
import { HERALD_NODE_OPTIONS, nodeFlagsOf, nodeOptionsOf } from "../scripts/processes.mjs";
import { ensureSimulatorCa } from "../scripts/trust.mjs";
import { buildNotification } from "../services/sender-apns/src/apns-payload.js";
import { signProviderToken } from "../services/sender-apns/src/provider-token.js";
import { fcmMessage, sendBody } from "../services/sender-fcm/src/fcm-message.js";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../test/support/credential-fixtures.js";
import { deleteNamespaceStreams } from "../test/support/nats-streams.js";
import { freePort } from "../test/support/stack.js";
import {
  CORES,
  flag,
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
import { startSink as startNodeSink } from "./e2e.js";
import { runPeerChild } from "./peer-child.js";
import { apnsToken, fcmToken, webPushPath, webPushSubscription } from "./peer-kit.mjs";
import { type BuiltStack, startBuiltStack } from "./herald-stack.js";
import { ensureNghttp, h2load, type H2loadResult, startSink as startNghttpSink } from "./nghttp-sink.js";
import { cpuSeconds, peakRss } from "./proc-stats.js";

// Each Herald sender alone against its peer library and a bare node:http2 client, on one
// sink, with the same payload to the same audience of distinct devices, interleaved round
// by round, each side after a warm-up. The sink: nghttp2's C servers (bench/nghttp-sink.ts)
// when it answers at once; bench/push-sink.ts when it answers `--latency` ms away, as real
// providers do (`--sink nghttpd|node` chooses). Both advertise `--max-streams` streams.
//
// Herald side: the built `herald credential` and `herald sender-<x>` processes, fed
// DeliveryBatch messages (as the campaign service publishes them) straight into JetStream,
// timed from the first publish until the OutcomeBatch messages account for every device.
// Peers (bench/peer-*.ts) and the raw client (bench/raw-h2.ts) run in their own plain-Node
// processes; every side's CPU time and memory are read from /proc.
//
// `npm run bench -- --scenario senders [--quick] [--devices N] [--warm W] [--rounds R]
//   [--platform apns,webpush,fcm] [--fcm-chunk 128] [--latency ms] [--max-streams 500]
//   [--sink nghttpd|node] [--label text]`

const N = option("devices", QUICK ? 5_000 : 50_000);
/** Devices each side sends to before it is measured (other devices of the same audience). */
const WARM = option("warm", Math.min(5_000, Math.ceil(N / 5)));
/**
 * What the peers' callers keep in flight where the library leaves it to them (web-push's
 * sockets, firebase-admin's messages per sendEach call × calls): SENDER_MAX_IN_FLIGHT's
 * old default. node-apn takes no such figure: its one session carries what the sink allows.
 */
const PEER_IN_FLIGHT = 256;
/** FANOUT_BATCH_SIZE's default: devices per DeliveryBatch. */
const BATCH_SIZE = 500;
/** firebase-admin: messages per sendEach call × calls at once = PEER_IN_FLIGHT. */
const FCM_CHUNK = option("fcm-chunk", 128);
/** nghttpd answers at once and only so; a sink far away is bench/push-sink.ts. */
const SINK_KIND = text("sink", LATENCY_MS > 0 ? "node" : "nghttpd") as "nghttpd" | "node";
/** Names the results (`senders-<label>`) instead of the latency. */
const LABEL = text("label", "");
/** NODE_OPTIONS of the Herald sender instead of the chart's defaults (heap experiments). */
const SENDER_NODE_OPTIONS = text("sender-node-options", "");
const TITLE = "Bench";
const BODY = "Hello from the senders benchmark";
const WEB_TTL = 28 * 24 * 3600;
const PROJECT_ID = "herald-bench";
const ACCESS_TOKEN = "bench-access-token";
const TIMEOUT_MS = 300_000;

type Provider = "apns" | "webpush" | "fcm";
type SideKind = "herald" | "before" | "stubbed" | "peer" | "peer-h1" | "raw";

/** --before: also each sender as it was, 256 sends in flight whatever its connections carry. */
const BEFORE = flag("before");
/** SENDER_MAX_IN_FLIGHT's default before send slots followed the connections (packages/sender/src/send-slots.ts). */
const BEFORE_IN_FLIGHT = 256;

/**
 * The sides of each provider; FCM's peer twice: its default HTTP/2 transport and its legacy
 * HTTP/1.1 one. APNs also runs sender-apns with its HTTP/2 exchange stubbed
 * (bench/stub-exchange.mjs): what the sender spends besides the requests the raw client makes.
 */
/** --sides herald,peer,…: only these sides (default: all of each provider's). */
const SIDES = text("sides", "all");
const sidesOf = (p: Provider): SideKind[] =>
  [...(BEFORE ? (["before"] as const) : []), ...sidesOfNow(p)].filter(
    (s) => SIDES === "all" || SIDES.split(",").includes(s),
  );
const sidesOfNow = (p: Provider): SideKind[] =>
  p === "fcm"
    ? ["herald", "peer", "peer-h1", "raw"]
    : p === "apns" && LATENCY_MS === 0
      ? ["herald", "stubbed", "peer", "raw"]
      : // Far away the stub (which answers at once) says nothing new.
        ["herald", "peer", "raw"];

/** --platform apns|webpush|fcm (default: all three). */
const ONLY = text("platform", "all");
const PROVIDERS = (["apns", "webpush", "fcm"] as const).filter((p) => ONLY === "all" || ONLY.split(",").includes(p));

export interface SendersContext {
  releaseDir: string;
  env: Record<string, string>;
  apiKey: string;
  databaseUrl: string;
}

interface Run {
  provider: Provider;
  side: SideKind;
  round: number;
  seconds: number;
  perSecond: number;
  delivered: number;
  failed: number;
  firstError?: string;
  /** From the start (the first publish, the peer's "go") to the sink's first, median and 99th percentile arrival; NaN when the sink keeps no times (nghttpd). */
  firstDeliveryMs: number;
  p50Ms: number;
  p99Ms: number;
  cpuSeconds: Record<string, number>;
  cpuPer10k: number;
  /** CPU µs per notification of each process of the side (the sender's own, the credential service's). */
  cpuUsPerNotification: Record<string, number>;
  /** CPU seconds over wall seconds of the side's processes: 100 = one core busy throughout. */
  cpuBusyPct: number;
  peakRssMb: Record<string, number>;
  sinkCpuPct: number;
  /** The machine's 1-minute load average when the run ended: other work shares the cores. */
  load1: number;
}

const version = (pkg: string) =>
  (JSON.parse(readFileSync(path.join(root, "node_modules", pkg, "package.json"), "utf8")) as { version: string })
    .version;

/** An audience per provider: devices 0 … N - 1 measured, N … N + WARM - 1 the warm-up's (bench/peer-kit.mjs). */
interface Fixtures {
  apns: { key: ReturnType<typeof makeApnsKey>; topic: string; seed: string };
  fcm: { serviceAccount: ReturnType<typeof makeServiceAccount>; seed: string };
  web: {
    vapid: { publicKey: string; privateKey: string; subject: string };
    seed: string;
    /** The subscribers' shared P-256 public key. */
    p256dh: string;
  };
}

/** The sink of every side of a run: nghttpd (and nghttpx) or bench/push-sink.ts. */
interface SenderSink {
  kind: "nghttpd" | "node";
  /** HTTP/2 over TLS. */
  h2Url: string;
  /** HTTP/1.1 over TLS (web-push, firebase-admin's legacy transport), the Web Push endpoints' origin for them. */
  h1Url: string;
  /** The Web Push endpoints' origin for the Herald sender (HTTP/2). */
  webPushOrigin: string;
  tokenUrl: string;
  pids(): Record<string, number>;
  /** Forgets the arrivals so far (the warm-up's); nghttpd keeps none. */
  reset(): Promise<void>;
  /** Arrival times since the last reset; undefined for nghttpd. */
  arrivals(): Promise<{ count: number; firstAt: number; p50At: number; p99At: number } | undefined>;
  stop(): Promise<void>;
}

/** The request a sender makes, as the raw client and h2load send it. */
interface RawRequest {
  origin: string;
  path: string;
  /** Devices that differ by path (APNs tokens, Web Push endpoints): the raw client sends to each. */
  devices?: { kind: "apns" | "webpush"; seed: string };
  headers: Record<string, string>;
  body: Buffer;
}

/** The push token of device i of a provider's audience, as the registry stores it. */
function pushToken(provider: Provider, f: Fixtures, sink: SenderSink, i: number): string {
  if (provider === "apns") return apnsToken(f.apns.seed, i);
  if (provider === "fcm") return fcmToken(f.fcm.seed, i);
  return JSON.stringify(webPushSubscription(sink.webPushOrigin, f.web.seed, i, f.web.p256dh));
}

function deliveryBatch(
  campaignId: string,
  appId: string,
  platform: Platform,
  sequence: number,
  tokens: string[],
): DeliveryBatch {
  return create(DeliveryBatchSchema, {
    campaignId,
    appId,
    platform,
    sequence: BigInt(sequence),
    payloads: [create(RenderedPayloadSchema, { index: 0, title: TITLE, body: BODY })],
    targets: tokens.map((pushToken, i) => ({ deviceId: `${campaignId}-${sequence}-${i}`, pushToken, payloadIndex: 0 })),
    dataJson: "",
    ttlSeconds: 0,
    highPriority: false,
    createdAt: timestampNow(),
  });
}

/** What the Herald sender of each provider sends, built with the sender's own code. */
async function rawRequests(sink: SenderSink, f: Fixtures): Promise<Record<Provider, RawRequest>> {
  const batch = deliveryBatch("raw", "raw", Platform.IOS, 0, []);
  const payload = batch.payloads[0]!;
  const apns = buildNotification(batch, payload, {}, f.apns.topic, { sound: "default" });
  if (!apns.ok) throw new Error(`APNs payload: ${apns.reason}`);
  const subscription = webPushSubscription(sink.webPushOrigin, f.web.seed, 0, f.web.p256dh);
  const web = webpush.generateRequestDetails(subscription, webPlaintext(), {
    vapidDetails: f.web.vapid,
    TTL: WEB_TTL,
    urgency: "normal",
    contentEncoding: "aes128gcm",
  });
  const endpoint = new URL(subscription.endpoint);
  // The APNs provider token exactly as sender-apns signs it.
  const apnsJwt = signProviderToken(
    {
      teamId: f.apns.key.teamId,
      keyId: f.apns.key.keyId,
      privateKey: createPrivateKey(f.apns.key.p8),
      fingerprint: "",
    },
    Math.floor(Date.now() / 1000),
  );
  return {
    apns: {
      origin: sink.h2Url,
      path: `/3/device/${apnsToken(f.apns.seed, 0)}`,
      devices: { kind: "apns", seed: f.apns.seed },
      headers: { ...apns.notification.headers, authorization: `bearer ${await apnsJwt}` },
      body: apns.notification.body,
    },
    fcm: {
      origin: sink.h2Url,
      path: `/v1/projects/${PROJECT_ID}/messages:send`,
      headers: { authorization: `Bearer ${ACCESS_TOKEN}`, "content-type": "application/json; charset=utf-8" },
      body: Buffer.from(sendBody(fcmMessage(fcmToken(f.fcm.seed, 0), batch, payload, {}, undefined))),
    },
    webpush: {
      origin: endpoint.origin,
      path: endpoint.pathname,
      devices: { kind: "webpush", seed: f.web.seed },
      headers: Object.fromEntries(
        Object.entries(web.headers)
          .filter(([k]) => k.toLowerCase() !== "content-length")
          .map(([k, v]) => [k.toLowerCase(), String(v)]),
      ),
      body: web.body,
    },
  };
}

/** What sender-webpush encrypts for a send without data (services/sender-webpush/src/webpush-provider.ts). */
const webPlaintext = () => JSON.stringify({ title: TITLE, body: BODY, data: {} });

/**
 * The sink: nghttpd serving a docroot (a file per APNs token and Web Push endpoint of the
 * audiences, one for FCM's send URL and the token), or bench/push-sink.ts answering every
 * route `--latency` ms away.
 */
async function startSenderSink(f: Fixtures, bins: Record<string, string>, certDir: string): Promise<SenderSink> {
  if (SINK_KIND === "node") {
    const sink = await startNodeSink({ latencyMs: LATENCY_MS, maxStreams: MAX_STREAMS });
    const h1Url = `https://127.0.0.1:${sink.tokenPort}`;
    const admin = (what: string) => fetch(`${sink.admin}/${what}`, { method: what === "reset" ? "POST" : "GET" });
    return {
      kind: "node",
      h2Url: `https://127.0.0.1:${sink.port}`,
      h1Url,
      webPushOrigin: `https://127.0.0.1:${sink.port}`,
      tokenUrl: `${h1Url}/token`,
      pids: () => ({ sink: sink.child.pid! }),
      reset: async () => void (await (await admin("reset")).arrayBuffer()),
      arrivals: async () => (await (await admin("count")).json()) as Awaited<ReturnType<SenderSink["arrivals"]>>,
      stop: async () => {
        const exited = once(sink.child, "exit");
        sink.child.kill("SIGTERM");
        await exited;
      },
    };
  }
  const files: Record<string, string> = {
    [`v1/projects/${PROJECT_ID}/messages:send`]: JSON.stringify({ name: `projects/${PROJECT_ID}/messages/1` }),
    token: JSON.stringify({ access_token: ACCESS_TOKEN, expires_in: 3600, token_type: "Bearer" }),
  };
  for (let i = 0; i < N + WARM; i++) {
    if (PROVIDERS.includes("apns")) files[`3/device/${apnsToken(f.apns.seed, i)}`] = "";
    if (PROVIDERS.includes("webpush")) files[webPushPath(f.web.seed, i)] = "";
  }
  const sink = await startNghttpSink({
    bins,
    certFile: path.join(certDir, "server.pem"),
    keyFile: path.join(certDir, "server-key.pem"),
    maxStreams: MAX_STREAMS,
    files,
  });
  return {
    kind: "nghttpd",
    h2Url: sink.h2Url,
    h1Url: sink.frontUrl,
    // Through nghttpx: web-push speaks HTTP/1.1 only, and every side gets the same subscriptions.
    webPushOrigin: sink.frontUrl,
    tokenUrl: `${sink.frontUrl}/token`,
    pids: sink.pids,
    reset: async () => undefined,
    arrivals: async () => undefined,
    stop: sink.stop,
  };
}

export async function senders(ctx: SendersContext): Promise<void> {
  const bins = await ensureNghttp();
  const certDir = path.dirname(ensureSimulatorCa(root));
  const vapid = makeVapidKeys();
  const subscriber = createECDH("prime256v1");
  subscriber.generateKeys();
  const seed = () => randomBytes(4).toString("hex");
  const f: Fixtures = {
    apns: { key: makeApnsKey(), topic: "com.example.senders", seed: seed() },
    fcm: { serviceAccount: makeServiceAccount({ projectId: PROJECT_ID }), seed: seed() },
    web: {
      vapid: { ...vapid, subject: "mailto:bench@example.com" },
      seed: seed(),
      p256dh: subscriber.getPublicKey().toString("base64url"),
    },
  };
  const sink = await startSenderSink(f, bins, certDir);
  const namespace = `${ctx.env.NATS_NAMESPACE}_senders`;
  const env: Record<string, string> = { ...ctx.env, NATS_NAMESPACE: namespace, HERALD_WEBPUSH_ALLOW_PRIVATE: "true" };
  const nc = await connect({ servers: env.NATS_URL!.split(",") });
  const js = jetstream(nc);
  const names = streamNames(namespace);
  const raw = await rawRequests(sink, f);
  const apps: Partial<Record<Provider, string>> = {};
  const runs: Run[] = [];
  /** Latencies from `t0` as the sink saw them (NaN for nghttpd). */
  const latencies = async (t0: number) => {
    const a = await sink.arrivals();
    return a && a.count > 0
      ? { firstDeliveryMs: a.firstAt - t0, p50Ms: a.p50At - t0, p99Ms: a.p99At - t0 }
      : { firstDeliveryMs: Number.NaN, p50Ms: Number.NaN, p99Ms: Number.NaN };
  };
  try {
    const ceilingRuns: CeilingRun[] = [];

    /** Runs one side in a child process (bench/peer-*.ts, bench/raw-h2.ts) and reads its figures. */
    const childSide = async (provider: Provider, side: SideKind, round: number): Promise<Run> => {
      const [script, config] = side === "raw" ? rawConfig(raw[provider]) : peerConfig(provider, f, sink, side);
      let sinkCpu0 = 0;
      let t0 = 0;
      const done = await runPeerChild(
        script,
        config,
        { NODE_EXTRA_CA_CERTS: env.NODE_EXTRA_CA_CERTS ?? "" },
        side,
        async () => {
          // After the peer's warm-up: the sink's CPU and arrivals over the send loop alone.
          await sink.reset();
          sinkCpu0 = sinkCpu(sink);
          t0 = Date.now();
        },
      );
      return measured(provider, side, round, {
        seconds: done.seconds,
        delivered: done.ok,
        failed: done.failed,
        firstError: done.firstError,
        ...(await latencies(t0)),
        cpu: { [side]: done.cpuSeconds },
        rss: done.rss,
        sinkCpuPct: ((sinkCpu(sink) - sinkCpu0) / done.seconds) * 100,
      });
    };

    const heraldSide = async (
      provider: Provider,
      round: number,
      kind: "herald" | "stubbed" | "before",
    ): Promise<Run> => {
      const stubbed = kind === "stubbed";
      const role = `sender-${provider}`;
      const credentialPort = await freePort();
      const stack: BuiltStack = await startBuiltStack({
        releaseDir: ctx.releaseDir,
        roles: ["credential", role],
        // The stub patches the pool's class: the sender must load it from tsc's output, not its bundle's copy.
        unbundled: stubbed ? [role] : undefined,
        providers: { APNS_URL: sink.h2Url, FCM_URL: sink.h2Url, FCM_TOKEN_URL: sink.tokenUrl },
        env,
        // The bench talks to the credential service itself (apps and platform configs).
        envFor: {
          credential: { PORT: String(credentialPort) },
          [role]: {
            CREDENTIAL_URL: `http://127.0.0.1:${credentialPort}`,
            ...(kind === "before" ? { SENDER_MAX_IN_FLIGHT: String(BEFORE_IN_FLIGHT) } : {}),
            ...(SENDER_NODE_OPTIONS ? { NODE_OPTIONS: SENDER_NODE_OPTIONS } : {}),
            ...(stubbed ? { NODE_OPTIONS: `--import ${path.join(root, "bench/stub-exchange.mjs")}` } : {}),
          },
        },
      });
      try {
        if (!apps[provider]) Object.assign(apps, await createApps(`http://127.0.0.1:${credentialPort}`, ctx.apiKey, f));
        const platform = { apns: Platform.IOS, fcm: Platform.ANDROID, webpush: Platform.WEB }[provider];
        const subject = names.delivery(({ apns: "ios", fcm: "android", webpush: "web" } as const)[provider]);

        /** A campaign to devices from … from + n - 1, its batches encoded before `go` (the campaign service's work). */
        const campaign = (from: number, n: number) => {
          const campaignId = randomUUID();
          const batches = Array.from({ length: Math.ceil(n / BATCH_SIZE) }, (_, seq) =>
            toBinary(
              DeliveryBatchSchema,
              deliveryBatch(
                campaignId,
                apps[provider]!,
                platform,
                seq,
                Array.from({ length: Math.min(BATCH_SIZE, n - seq * BATCH_SIZE) }, (_, i) =>
                  pushToken(provider, f, sink, from + seq * BATCH_SIZE + i),
                ),
              ),
            ),
          );
          return { go: () => deliver(campaignId, batches, n) };
        };

        /** Publishes the batches and resolves once the OutcomeBatch messages account for every device. */
        const deliver = async (campaignId: string, batches: Uint8Array[], n: number) => {
          const outcomes = { delivered: 0, failed: 0, firstError: undefined as string | undefined };
          const seen = new Set<bigint>();
          let allIn: () => void = () => {};
          const finished = new Promise<void>((resolve) => (allIn = resolve));
          // A plain subscription sees what the sender publishes to the (work-queue) stream.
          const sub = nc.subscribe(names.outcome(campaignId), {
            callback: (_err, m) => {
              const batch = fromBinary(OutcomeBatchSchema, m.data);
              if (seen.has(batch.sequence)) return;
              seen.add(batch.sequence);
              for (const o of batch.outcomes) {
                if (o.kind === OutcomeKind.DELIVERED) outcomes.delivered++;
                else {
                  outcomes.failed++;
                  outcomes.firstError ??= `${OutcomeKind[o.kind]} ${o.reason}`;
                }
              }
              if (outcomes.delivered + outcomes.failed >= n) allIn();
            },
          });
          await nc.flush();
          try {
            await Promise.all(batches.map((data, seq) => js.publish(subject, data, { msgID: `${campaignId}.${seq}` })));
            let timer: NodeJS.Timeout | undefined;
            await Promise.race([
              finished,
              new Promise((_, reject) => {
                timer = setTimeout(() => {
                  const logs = stack.recentOutput();
                  reject(
                    new Error(`${role}: ${outcomes.delivered + outcomes.failed} of ${n} outcomes in 300 s:\n${logs}`),
                  );
                }, TIMEOUT_MS);
              }),
            ]).finally(() => clearTimeout(timer));
          } finally {
            sub.unsubscribe();
          }
          return outcomes;
        };

        // The warm-up: connections open, code compiled, credentials cached.
        const warm = await campaign(N, WARM).go();
        if (warm.failed > 0) throw new Error(`${role} warm-up: ${warm.failed} failed (${warm.firstError})`);
        const measuredCampaign = campaign(0, N);
        await sink.reset();
        const pids = stack.pids();
        const cpu0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
        const rss = peakRss(pids);
        const sinkCpu0 = sinkCpu(sink);
        const t0wall = Date.now();
        const t0 = performance.now();
        const outcomes = await measuredCampaign.go();
        const seconds = (performance.now() - t0) / 1000;
        const cpu = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid) - cpu0[n]!]));
        return measured(provider, kind, round, {
          seconds,
          delivered: outcomes.delivered,
          failed: outcomes.failed,
          firstError: outcomes.firstError,
          ...(await latencies(t0wall)),
          cpu,
          rss: rss.stop(),
          sinkCpuPct: ((sinkCpu(sink) - sinkCpu0) / seconds) * 100,
        });
      } finally {
        await stack.stop();
      }
    };

    for (let round = 0; round < ROUNDS; round++) {
      for (const provider of PROVIDERS) {
        // The sink's ceiling in the same conditions as the sides that follow.
        for (const c of await measureCeiling(bins.h2load!, provider, raw[provider])) {
          ceilingRuns.push({ ...c, round });
          console.log(
            `  round ${round + 1} ${provider.padEnd(7)} sink ceiling (${c.label}): ${Math.round(c.perSecond)}/s` +
              (c.failed ? `, ${c.failed} failed` : ""),
          );
        }
        // Interleaved: each round starts with the next side.
        const sides = sidesOf(provider);
        for (const side of sides.map((_, i) => sides[(i + round) % sides.length]!)) {
          const run =
            side === "herald" || side === "stubbed" || side === "before"
              ? await heraldSide(provider, round, side)
              : await childSide(provider, side, round);
          runs.push(run);
          console.log(
            `  round ${round + 1} ${provider.padEnd(7)} ${sideLabel(provider, side).padEnd(26)} ` +
              `${Math.round(run.perSecond)}/s, CPU ${(run.cpuPer10k * 100).toFixed(1)} µs per notification ` +
              `(${Math.round(run.cpuBusyPct)} % busy), first ${Math.round(run.firstDeliveryMs)} ms, ` +
              `p99 ${Math.round(run.p99Ms)} ms, sink ${Math.round(run.sinkCpuPct)} %, ` +
              `RSS ${Object.entries(run.peakRssMb)
                .map(([n, mb]) => `${n} ${Math.round(mb)} MB`)
                .join(", ")}` +
              (run.failed ? `, ${run.failed} not delivered (${run.firstError})` : ""),
          );
        }
      }
    }
    report(runs, ceilingRuns);
  } finally {
    await nc.close();
    await sink.stop();
    await deleteNamespaceStreams(env.NATS_URL!, namespace);
  }
}

const PEERS: Record<Provider, { label: string; pkg: string; script: string }> = {
  apns: { label: "@parse/node-apn", pkg: "@parse/node-apn", script: "bench/peer-apns.ts" },
  webpush: { label: "web-push sendNotification", pkg: "web-push", script: "bench/peer-webpush.ts" },
  fcm: { label: "firebase-admin sendEach", pkg: "firebase-admin", script: "bench/peer-fcm.ts" },
};

function sideLabel(provider: Provider, side: SideKind): string {
  if (side === "herald") return `Herald sender-${provider}`;
  if (side === "stubbed") return `Herald sender-${provider}, HTTP/2 exchange stubbed`;
  if (side === "before") return `Herald sender-${provider}, ${BEFORE_IN_FLIGHT} in flight (before)`;
  if (side === "raw") return "raw node:http2";
  const peer = PEERS[provider];
  return `${peer.label} ${version(peer.pkg)}${side === "peer-h1" ? " (legacy HTTP/1.1)" : ""}`;
}

/** The raw client fills one connection to the sink's stream limit. */
function rawConfig(req: RawRequest): [string, unknown] {
  return [
    "bench/raw-h2.ts",
    {
      origin: req.origin,
      path: req.path,
      ...(req.devices ? { devices: req.devices } : {}),
      headers: req.headers,
      body: req.body.toString("base64"),
      n: N,
      warm: WARM,
      concurrency: MAX_STREAMS,
      sessions: 1,
    },
  ];
}

function peerConfig(provider: Provider, f: Fixtures, sink: SenderSink, side: SideKind): [string, unknown] {
  const h2 = new URL(sink.h2Url);
  const h1 = new URL(sink.h1Url);
  const common = { n: N, warm: WARM, title: TITLE, body: BODY };
  switch (provider) {
    case "apns":
      return [
        PEERS.apns.script,
        {
          ...common,
          host: h2.hostname,
          port: Number(h2.port),
          p8: f.apns.key.p8,
          keyId: f.apns.key.keyId,
          teamId: f.apns.key.teamId,
          topic: f.apns.topic,
          seed: f.apns.seed,
        },
      ];
    case "webpush":
      return [
        PEERS.webpush.script,
        {
          n: N,
          warm: WARM,
          origin: sink.h1Url,
          seed: f.web.seed,
          p256dh: f.web.p256dh,
          vapid: f.web.vapid,
          payload: webPlaintext(),
          ttl: WEB_TTL,
          concurrency: PEER_IN_FLIGHT,
        },
      ];
    case "fcm":
      return [
        PEERS.fcm.script,
        {
          ...common,
          transport: side === "peer-h1" ? "h1" : "h2",
          // HTTP/1.1 only on the sink's HTTP/1.1 side; HTTP/2 straight to it, as sender-fcm.
          host: (side === "peer-h1" ? h1 : h2).hostname,
          port: Number((side === "peer-h1" ? h1 : h2).port),
          projectId: PROJECT_ID,
          seed: f.fcm.seed,
          chunk: FCM_CHUNK,
          calls: Math.max(1, Math.floor(PEER_IN_FLIGHT / FCM_CHUNK)),
        },
      ];
  }
}

/** One app per provider with its platform config, through the credential service's RPC API. */
async function createApps(credentialUrl: string, apiKey: string, f: Fixtures): Promise<Record<Provider, string>> {
  const rpc = createRpcClient(CredentialService, credentialUrl);
  try {
    const { principal } = await rpc.client.verifyApiKey({ secret: apiKey });
    const app = async (platform: Platform, name: string, bundleId: string) =>
      (await rpc.client.createApp({ orgId: principal!.orgId, name, platform, bundleId })).app!.id;
    const suffix = randomBytes(4).toString("hex");
    const ios = await app(Platform.IOS, "Senders iOS", `${f.apns.topic}.${suffix}`);
    await rpc.client.putPlatformConfig({
      appId: ios,
      credentials: {
        case: "apns",
        value: {
          p8Key: f.apns.key.p8,
          keyId: f.apns.key.keyId,
          teamId: f.apns.key.teamId,
          topic: f.apns.topic,
          environment: "production",
        },
      },
    });
    const android = await app(Platform.ANDROID, "Senders Android", `com.example.senders.android.${suffix}`);
    await rpc.client.putPlatformConfig({
      appId: android,
      credentials: { case: "fcm", value: { serviceAccountJson: f.fcm.serviceAccount.json } },
    });
    const web = await app(Platform.WEB, "Senders Web", `com.example.senders.web.${suffix}`);
    await rpc.client.putPlatformConfig({ appId: web, credentials: { case: "vapid", value: f.web.vapid } });
    return { apns: ios, fcm: android, webpush: web };
  } finally {
    rpc.close();
  }
}

function sinkCpu(sink: SenderSink): number {
  return Object.values(sink.pids()).reduce((n, pid) => n + cpuSeconds(pid), 0);
}

function measured(
  provider: Provider,
  side: SideKind,
  round: number,
  m: {
    seconds: number;
    delivered: number;
    failed: number;
    firstError: string | undefined;
    firstDeliveryMs: number;
    p50Ms: number;
    p99Ms: number;
    cpu: Record<string, number>;
    rss: Record<string, number>;
    sinkCpuPct: number;
  },
): Run {
  const total = Object.values(m.cpu).reduce((a, b) => a + b, 0);
  const per = Math.max(1, m.delivered);
  return {
    provider,
    side,
    round,
    seconds: m.seconds,
    perSecond: m.delivered / m.seconds,
    delivered: m.delivered,
    failed: m.failed,
    ...(m.firstError ? { firstError: m.firstError } : {}),
    firstDeliveryMs: m.firstDeliveryMs,
    p50Ms: m.p50Ms,
    p99Ms: m.p99Ms,
    cpuSeconds: m.cpu,
    cpuPer10k: (total / per) * 10_000,
    cpuUsPerNotification: Object.fromEntries(Object.entries(m.cpu).map(([n, s]) => [n, (s / per) * 1e6])),
    cpuBusyPct: (total / m.seconds) * 100,
    peakRssMb: m.rss,
    sinkCpuPct: m.sinkCpuPct,
    load1: os.loadavg()[0]!,
  };
}

interface CeilingRun extends H2loadResult {
  key: string;
  label: string;
  round: number;
}

/**
 * h2load against the sink with a provider's request: what the sink takes. One connection
 * when it answers at once; far away, one connection is only its streams ÷ the latency, so
 * 8 connections.
 */
async function measureCeiling(bin: string, p: Provider, req: RawRequest): Promise<Omit<CeilingRun, "round">[]> {
  const clients = LATENCY_MS > 0 ? 8 : 1;
  const h2 = {
    url: `${req.origin}${req.path}`,
    body: req.body,
    headers: req.headers,
    requests: Math.max(N, 50_000),
    clients,
    streams: MAX_STREAMS,
  };
  const where = SINK_KIND === "node" ? "bench/push-sink.ts" : p === "webpush" ? "nghttpx → nghttpd" : "nghttpd";
  const out: Omit<CeilingRun, "round">[] = [
    {
      key: p,
      label: `h2load, ${clients} connection(s) × ${MAX_STREAMS} streams (${where})`,
      ...(await h2load(bin, h2)),
    },
  ];
  if (p === "webpush" && SINK_KIND === "nghttpd") {
    out.push({
      key: `${p}-h1`,
      label: `h2load --h1, ${PEER_IN_FLIGHT} connections (${where})`,
      ...(await h2load(bin, {
        ...h2,
        requests: Math.max(N, 20_000),
        clients: PEER_IN_FLIGHT,
        streams: 1,
        h1: true,
      })),
    });
  }
  return out;
}

/** Targets when the sink answers at once (LATENCY_MS 0). */
const TARGETS_AT_ONCE: { provider: Provider; against: SideKind; min: number; text: string }[] = [
  { provider: "apns", against: "peer", min: 1.6, text: "sender-apns ≥ 1.6 × node-apn" },
  { provider: "apns", against: "raw", min: 0.9, text: "sender-apns ≥ 90 % of raw node:http2" },
  { provider: "webpush", against: "peer", min: 4, text: "sender-webpush ≥ 4 × web-push" },
  {
    provider: "fcm",
    against: "peer",
    min: 2.5,
    text: "sender-fcm ≥ 2.5 × firebase-admin sendEach (HTTP/2, its default)",
  },
  {
    provider: "fcm",
    against: "peer-h1",
    min: 2.5,
    text: "sender-fcm ≥ 2.5 × firebase-admin sendEach (legacy HTTP/1.1)",
  },
];

/** Targets when the sink is far away (issue 32: at 100 ms). */
const TARGETS_FAR: { provider: Provider; against: SideKind; min: number; text: string }[] = [
  { provider: "apns", against: "peer", min: 2, text: "sender-apns ≥ 2 × node-apn's default" },
  { provider: "fcm", against: "peer", min: 4, text: "sender-fcm ≥ 4 × firebase-admin sendEach (HTTP/2, its default)" },
];
const TARGETS = LATENCY_MS > 0 ? TARGETS_FAR : TARGETS_AT_ONCE;
/** One sender-apns replica far away: notifications/s at least, peak RSS at most. */
const APNS_FAR = { perSecond: 15_000, peakRssMb: 250 };

const PROVIDER_NAMES: Record<Provider, string> = { apns: "APNs", webpush: "Web Push", fcm: "FCM" };

/**
 * What the stubbed side proves about "sender-apns ≥ 90 % of raw node:http2": a sender pays
 * its own work (the stubbed side's CPU) on top of the exchange the raw client makes (the raw
 * side's CPU, a floor for the pool's), so at the raw client's CPU per second it reaches at
 * most raw ÷ (own + raw) of the raw client's rate.
 */
function pipelineLimit(
  stubbed: { perSecond: number; cpuPer10k: number; cpuBusyPct: number },
  raw: { perSecond: number; cpuPer10k: number; cpuBusyPct: number },
): string {
  const bound = raw.cpuPer10k / (stubbed.cpuPer10k + raw.cpuPer10k);
  return (
    `Limit of the 90 % target: sender-apns's own work, its HTTP/2 exchange stubbed, costs ` +
    `${stubbed.cpuPer10k.toFixed(2)} CPU s per 10k (${Math.round(stubbed.perSecond)}/s at ` +
    `${Math.round(stubbed.cpuBusyPct)} % busy, ${(stubbed.perSecond / raw.perSecond).toFixed(2)} × the raw client ` +
    `with no HTTP at all); the raw client's whole exchange costs ${raw.cpuPer10k.toFixed(2)} s. A sender doing both ` +
    `spends at least ${(stubbed.cpuPer10k + raw.cpuPer10k).toFixed(2)} s per 10k: at the raw client's ` +
    `${Math.round(raw.cpuBusyPct)} % busy that is at most ${Math.round(bound * 100)} % of its rate. 90 % needs the ` +
    `sender's own work under ${(raw.cpuPer10k / 9).toFixed(2)} s per 10k.`
  );
}

function report(runs: Run[], ceilingRuns: CeilingRun[]) {
  const ceilings = [...new Set(ceilingRuns.map((c) => c.key))].map((key) => {
    const cs = ceilingRuns.filter((c) => c.key === key);
    return {
      key,
      label: cs[0]!.label,
      perSecond: median(cs.map((c) => c.perSecond)),
      failed: cs.reduce((n, c) => n + c.failed, 0),
    };
  });
  const rows = PROVIDERS.flatMap((provider) =>
    sidesOf(provider).map((side) => {
      const rs = runs.filter((r) => r.provider === provider && r.side === side);
      return {
        provider,
        side,
        label: sideLabel(provider, side),
        perSecond: median(rs.map((r) => r.perSecond)),
        cpuPer10k: median(rs.map((r) => r.cpuPer10k)),
        // The sender's own process (or the peer's): the credential service's is in the JSON.
        cpuUs: median(
          rs.map(
            (r) =>
              (side !== "peer" && side !== "peer-h1" && side !== "raw"
                ? r.cpuUsPerNotification[`sender-${provider}`]
                : r.cpuUsPerNotification[side]) ?? Number.NaN,
          ),
        ),
        firstDeliveryMs: median(rs.map((r) => r.firstDeliveryMs)),
        p50Ms: median(rs.map((r) => r.p50Ms)),
        p99Ms: median(rs.map((r) => r.p99Ms)),
        cpuBusyPct: median(rs.map((r) => r.cpuBusyPct)),
        sinkCpuPct: median(rs.map((r) => r.sinkCpuPct)),
        // The sender's own process; the credential service's is in the JSON.
        peakRssMb: Math.max(
          ...rs.map(
            (r) =>
              (side !== "peer" && side !== "peer-h1" && side !== "raw"
                ? r.peakRssMb[`sender-${provider}`]
                : r.peakRssMb[side]) ?? 0,
          ),
        ),
        notDelivered: rs.reduce((n, r) => n + (N - r.delivered), 0),
        firstError: rs.find((r) => r.firstError)?.firstError,
      };
    }),
  );
  // A side left out (--sides) reads as NaN.
  const missing = (p: Provider, s: SideKind) => ({
    provider: p,
    side: s,
    label: sideLabel(p, s),
    perSecond: Number.NaN,
    cpuPer10k: Number.NaN,
    cpuUs: Number.NaN,
    firstDeliveryMs: Number.NaN,
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    cpuBusyPct: Number.NaN,
    sinkCpuPct: Number.NaN,
    peakRssMb: Number.NaN,
    notDelivered: 0,
    firstError: undefined,
  });
  const row = (p: Provider, s: SideKind) => rows.find((r) => r.provider === p && r.side === s) ?? missing(p, s);
  const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  const sinkText =
    SINK_KIND === "node"
      ? `bench/push-sink.ts (Node, its own process), answering ${LATENCY_MS} ms (± 10 %) after each request, ` +
        `${MAX_STREAMS} streams per connection`
      : `nghttpd answering at once, ${MAX_STREAMS} streams per connection`;
  const far = LATENCY_MS > 0 && PROVIDERS.includes("apns") ? row("apns", "herald") : undefined;
  const lines = [
    `## Senders alone: ${N.toLocaleString("en")} notifications per side, sink ${LATENCY_MS} ms away`,
    "",
    `Built \`herald sender-*\` (production build, default settings) with \`herald credential\`, fed DeliveryBatch ` +
      `messages of ${BATCH_SIZE} distinct devices straight into JetStream, timed from the first publish until the ` +
      "OutcomeBatch messages account for every device; each peer and the raw client in its own plain-Node process. " +
      `Same sink (${sinkText}), same payload, the same audience of ${N.toLocaleString("en")} distinct devices on ` +
      `every side, after a warm-up of ${WARM.toLocaleString("en")} other devices. ${ROUNDS} interleaved round(s), ` +
      `medians. Node ${process.version}, ${CORES} cores; 1-minute load average ` +
      `${Math.min(...runs.map((r) => r.load1)).toFixed(1)}–${Math.max(...runs.map((r) => r.load1)).toFixed(1)} ` +
      "at the end of the runs (anything else running on the machine shares its cores).",
    "",
    "| provider | side | notifications/s | × raw node:http2 | Herald ÷ peer | CPU µs per notification | CPU busy % | peak RSS MB | first delivery ms | p50 ms | p99 ms | sink CPU % |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...PROVIDERS.flatMap((p) => {
      const raw = row(p, "raw");
      const peer = row(p, "peer");
      const ceilingRows = ceilings
        .filter((c) => c.key === p || c.key.startsWith(`${p}-`))
        .map(
          (c) =>
            `| ${PROVIDER_NAMES[p]} | sink ceiling: ${c.label}${c.failed ? ` (${c.failed} failed)` : ""} | ` +
            `${Math.round(c.perSecond)} | | | | | | | | | |`,
        );
      return [
        ...sidesOf(p).map((s) => {
          const r = row(p, s);
          return (
            `| ${PROVIDER_NAMES[p]} | ${r.label}${r.notDelivered ? ` (${r.notDelivered} not delivered: ${r.firstError})` : ""} | ` +
            `${Math.round(r.perSecond)} | ${fmt(r.perSecond / raw.perSecond)} | ` +
            `${s === "herald" || s === "before" ? `${fmt(r.perSecond / peer.perSecond)} (CPU ${fmt(r.cpuPer10k / peer.cpuPer10k)})` : ""} | ` +
            `${fmt(r.cpuUs, 1)} | ${Math.round(r.cpuBusyPct)} | ${Math.round(r.peakRssMb)} | ` +
            `${fmt(r.firstDeliveryMs, 0)} | ${fmt(r.p50Ms, 0)} | ${fmt(r.p99Ms, 0)} | ${Math.round(r.sinkCpuPct)} |`
          );
        }),
        ...ceilingRows,
      ];
    }),
    "",
    "| target | measured | met |",
    "|---|---:|---|",
    ...(far
      ? [
          `| one sender-apns replica ≥ ${APNS_FAR.perSecond.toLocaleString("en")}/s | ${Math.round(far.perSecond)}/s | ` +
            `${far.perSecond >= APNS_FAR.perSecond ? "yes" : "**no**"} |`,
          `| its peak RSS ≤ ${APNS_FAR.peakRssMb} MB | ${Math.round(far.peakRssMb)} MB | ` +
            `${far.peakRssMb <= APNS_FAR.peakRssMb ? "yes" : "**no**"} |`,
        ]
      : []),
    ...TARGETS.filter((t) => PROVIDERS.includes(t.provider)).map((t) => {
      const ratio = row(t.provider, "herald").perSecond / row(t.provider, t.against).perSecond;
      const shown = t.against === "raw" ? `${Math.round(ratio * 100)} %` : `${ratio.toFixed(2)} ×`;
      return `| ${t.text} | ${shown} | ${ratio >= t.min ? "yes" : "**no**"} |`;
    }),
    ...(BEFORE
      ? PROVIDERS.map((p) => {
          const ratio = row(p, "herald").perSecond / row(p, "before").perSecond;
          return (
            `| sender-${p}: send slots sized by its connections ÷ ${BEFORE_IN_FLIGHT} in flight (before), same run | ` +
            `${ratio.toFixed(2)} × (CPU per notification ${fmt(row(p, "herald").cpuUs / row(p, "before").cpuUs)} ×) | ` +
            `${ratio >= 0.95 ? "yes" : "**no**"} |`
          );
        })
      : []),
    ...(PROVIDERS.includes("apns") && sidesOf("apns").includes("stubbed")
      ? ["", pipelineLimit(row("apns", "stubbed"), row("apns", "raw"))]
      : []),
    "",
    "Notes:",
    "",
    "- CPU µs per notification: the sender process's own (the peer's, the raw client's) over the measured run, " +
      "after the warm-up; the credential service's is in the JSON (cpuUsPerNotification). Peak RSS: the sender " +
      "process's over the measured run. CPU busy %: CPU seconds ÷ wall seconds of the side's processes (100 = one " +
      "core throughout). First delivery, p50, p99: from the first publish (a peer's start) to the sink's receipt of " +
      "the first notification, the median one and the 99th percentile one (bench/push-sink.ts only: nghttpd keeps " +
      "no times). Sink CPU %: the sink's processes over the same time.",
    `- Herald's processes run with the chart's default V8 settings (scripts/processes.mjs; the image's ` +
      `NODE_OPTIONS are ${HERALD_NODE_OPTIONS}): ` +
      ["credential", "sender-apns", "sender-fcm", "sender-webpush"]
        .map((role) => `${role} ${[...nodeFlagsOf(role), `NODE_OPTIONS="${nodeOptionsOf(role)}"`].join(" ")}`)
        .join("; ") +
      ". The peers and the raw client run with Node's defaults.",
    SINK_KIND === "node"
      ? `- Sink: bench/push-sink.ts, node:http2 over TLS with the simulator's certificate, SETTINGS_MAX_CONCURRENT_STREAMS ` +
        `${MAX_STREAMS}, every answer ${LATENCY_MS} ms ± 10 % after its request ended; HTTP/1.1 clients (web-push, ` +
        "firebase-admin's legacy transport) and sender-fcm's OAuth token endpoint on its HTTP/1.1 port, answering " +
        "as late."
      : `- Sink: nghttp2's nghttpd (1 worker, ${MAX_STREAMS} streams) serving a docroot over TLS with the simulator's ` +
        "certificate: a file per APNs token and Web Push endpoint of the audiences, one for FCM's send URL. " +
        "Web Push goes through nghttpx (h2 and HTTP/1.1 by ALPN, 1 worker) in front of a cleartext nghttpd on the same " +
        "docroot for every side, because web-push speaks HTTP/1.1 only and nghttpd HTTP/2 only; sender-fcm's OAuth " +
        "token endpoint (HTTP/1.1) is a file behind the same nghttpx.",
    "- Herald: every sender's defaults (packages/sender/src/sender-config.ts and each service's config.ts): " +
      "send slots from 256 up to what the provider's connections carry (SETTINGS_MAX_CONCURRENT_STREAMS × open " +
      "connections + 256), doubled every 200 ms while all are taken and the event loop has time " +
      "(packages/sender/src/send-slots.ts)" +
      (BEFORE
        ? `; "(before)": the same build with SENDER_MAX_IN_FLIGHT=${BEFORE_IN_FLIGHT}, which gives exactly the fixed ` +
          `${BEFORE_IN_FLIGHT} send slots of before (the cap holds them there). No regression: ` +
          "at least 0.95 × its rate."
        : "."),
    "- @parse/node-apn: a Provider with its defaults (one HTTP/2 session) and token auth, pointed at the sink with its " +
      "`address`/`port` options; one Notification sent with `send(note, tokens)`, 1,000 distinct tokens a call, 2 " +
      "calls at once: its session carries as many streams as the sink allows.",
    `- web-push: sendNotification per message (aes128gcm encryption and a VAPID JWT per message), keep-alive ` +
      `https.Agent with up to ${PEER_IN_FLIGHT} sockets, ${PEER_IN_FLIGHT} in flight; Herald encrypts per message ` +
      "too and signs one VAPID JWT per origin. Subscriptions differ by endpoint and auth secret and share one P-256 key.",
    `- firebase-admin: sendEach of ${FCM_CHUNK} messages (one per distinct token), ` +
      `${Math.max(1, Math.floor(PEER_IN_FLIGHT / FCM_CHUNK))} calls at ` +
      "once. It has no endpoint option (`fcm.googleapis.com` is a constant) and no FCM emulator. Its default HTTP/2 " +
      "transport (a new session per sendEach call) ignores AppOptions.httpAgent, so bench/peer-fcm.ts wraps " +
      "node:http2's connect() in its own process: sessions for fcm.googleapis.com open to the sink (TLS, SNI " +
      "localhost), and their requests get `:scheme: https` instead of the SDK's `https:` (the URL's protocol with its " +
      "colon), which nghttp2 refuses as a PROTOCOL_ERROR and Google tolerates. The legacy HTTP/1.1 transport " +
      "(enableLegacyHttpTransport) takes AppOptions.httpAgent: a keep-alive agent whose sockets open to the sink's " +
      "HTTP/1.1 side, no patching. The OAuth token comes from a custom Credential on both (google-auth-library posts " +
      "to oauth2.googleapis.com whatever the key file's token_uri says). Everything else is the SDK's own.",
    "- raw node:http2: the exact request the Herald sender sends (headers and body built once with the sender's own " +
      `payload code; the path per device for APNs and Web Push), 1 session, ${MAX_STREAMS} streams in flight ` +
      "(the sink's limit).",
    ...(sidesOf("apns").includes("stubbed")
      ? [
          "- HTTP/2 exchange stubbed: the same built sender-apns, with bench/stub-exchange.mjs preloaded: every request of " +
            "its HTTP/2 pool answers at once with an empty 200 and nothing reaches the sink. It measures the sender's own " +
            "work per notification: JetStream, protobuf, batching, send slots, provider token and headers, metrics, outcomes.",
        ]
      : []),
  ];
  const table = lines.join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    LABEL ? `senders-${LABEL}` : `senders${LATENCY_MS > 0 ? `-${LATENCY_MS}ms` : ""}${QUICK ? "-quick" : ""}`,
    {
      devices: N,
      warm: WARM,
      latencyMs: LATENCY_MS,
      maxStreams: MAX_STREAMS,
      sink: SINK_KIND,
      peerInFlight: PEER_IN_FLIGHT,
      ...(SENDER_NODE_OPTIONS ? { senderNodeOptions: SENDER_NODE_OPTIONS } : {}),
      rounds: ROUNDS,
      node: process.version,
      ceilings,
      ceilingRuns,
      runs,
      rows,
    },
    table,
  );
}
