import { createECDH, createPrivateKey, randomBytes, randomUUID } from "node:crypto";
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
import { CORES, median, option, QUICK, ROUNDS, root, text, writeResult } from "./common.js";
import { runPeerChild } from "./peer-child.js";
import { type BuiltStack, startBuiltStack } from "./herald-stack.js";
import { ensureNghttp, h2load, type H2loadResult, type Sink, startSink } from "./nghttp-sink.js";
import { cpuSeconds, peakRss } from "./proc-stats.js";

// Each Herald sender alone against its peer library and a bare node:http2 client, on one
// sink (nghttp2's C servers, bench/nghttp-sink.ts), with the same payload and the same
// number of notifications in flight, interleaved round by round.
//
// Herald side: the built `herald credential` and `herald sender-<x>` processes, fed
// DeliveryBatch messages (as the campaign service publishes them) straight into JetStream,
// timed from the first publish until the OutcomeBatch messages account for every device.
// Peers (bench/peer-*.ts) and the raw client (bench/raw-h2.ts) run in their own plain-Node
// processes; every side's CPU time and memory are read from /proc.
//
// `npm run bench -- --scenario senders [--quick] [--devices N] [--rounds R]
//   [--platform apns,webpush,fcm] [--fcm-chunk 128]`

const N = option("devices", QUICK ? 5_000 : 50_000);
/** The concurrency budget of every side: SENDER_MAX_IN_FLIGHT's default (packages/sender/src/sender-config.ts). */
const IN_FLIGHT = 256;
/** FANOUT_BATCH_SIZE's default: devices per DeliveryBatch. */
const BATCH_SIZE = 500;
/** nghttpd and nghttpx SETTINGS_MAX_CONCURRENT_STREAMS: never what limits a client. */
const SINK_STREAMS = 4096;
/** firebase-admin: messages per sendEach call × calls at once = IN_FLIGHT. */
const FCM_CHUNK = option("fcm-chunk", 128);
const TITLE = "Bench";
const BODY = "Hello from the senders benchmark";
const WEB_TTL = 28 * 24 * 3600;
const PROJECT_ID = "herald-bench";
const ACCESS_TOKEN = "bench-access-token";
const TIMEOUT_MS = 300_000;

type Provider = "apns" | "webpush" | "fcm";
type SideKind = "herald" | "stubbed" | "peer" | "peer-h1" | "raw";

/**
 * The sides of each provider; FCM's peer twice: its default HTTP/2 transport and its legacy
 * HTTP/1.1 one. APNs also runs sender-apns with its HTTP/2 exchange stubbed
 * (bench/stub-exchange.mjs): what the sender spends besides the requests the raw client makes.
 */
const sidesOf = (p: Provider): SideKind[] =>
  p === "fcm"
    ? ["herald", "peer", "peer-h1", "raw"]
    : p === "apns"
      ? ["herald", "stubbed", "peer", "raw"]
      : ["herald", "peer", "raw"];

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
  cpuSeconds: Record<string, number>;
  cpuPer10k: number;
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

interface Fixtures {
  apns: { key: ReturnType<typeof makeApnsKey>; topic: string; token: string };
  fcm: { serviceAccount: ReturnType<typeof makeServiceAccount>; token: string };
  web: {
    vapid: { publicKey: string; privateKey: string; subject: string };
    subscription: { endpoint: string; keys: { p256dh: string; auth: string } };
  };
}

/** The request a sender makes, as the raw client and h2load send it. */
interface RawRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
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
async function rawRequests(sink: Sink, f: Fixtures): Promise<Record<Provider, RawRequest>> {
  const batch = deliveryBatch("raw", "raw", Platform.IOS, 0, []);
  const payload = batch.payloads[0]!;
  const apns = buildNotification(batch, payload, {}, f.apns.topic, { sound: "default" });
  if (!apns.ok) throw new Error(`APNs payload: ${apns.reason}`);
  const web = webpush.generateRequestDetails(f.web.subscription, webPlaintext(), {
    vapidDetails: f.web.vapid,
    TTL: WEB_TTL,
    urgency: "normal",
    contentEncoding: "aes128gcm",
  });
  const endpoint = new URL(f.web.subscription.endpoint);
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
      path: `/3/device/${f.apns.token}`,
      headers: { ...apns.notification.headers, authorization: `bearer ${await apnsJwt}` },
      body: apns.notification.body,
    },
    fcm: {
      origin: sink.h2Url,
      path: `/v1/projects/${PROJECT_ID}/messages:send`,
      headers: { authorization: `Bearer ${ACCESS_TOKEN}`, "content-type": "application/json; charset=utf-8" },
      body: Buffer.from(sendBody(fcmMessage(f.fcm.token, batch, payload, {}, undefined))),
    },
    webpush: {
      origin: endpoint.origin,
      path: endpoint.pathname,
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

export async function senders(ctx: SendersContext): Promise<void> {
  const bins = await ensureNghttp();
  const certDir = path.dirname(ensureSimulatorCa(root));
  const vapid = makeVapidKeys();
  const subscriber = createECDH("prime256v1");
  subscriber.generateKeys();
  const pushPath = `push/${randomBytes(16).toString("base64url")}`;
  const fixtures = {
    apns: { key: makeApnsKey(), topic: "com.example.senders", token: randomBytes(32).toString("hex") },
    fcm: {
      serviceAccount: makeServiceAccount({ projectId: PROJECT_ID }),
      // The shape of an FCM registration token: instance id, colon, about 150 characters.
      token: `${randomBytes(16).toString("base64url")}:APA91b${randomBytes(105).toString("base64url")}`,
    },
  };
  const sink = await startSink({
    bins,
    certFile: path.join(certDir, "server.pem"),
    keyFile: path.join(certDir, "server-key.pem"),
    maxStreams: SINK_STREAMS,
    // One device token, one registration token and one subscription for every device:
    // one file each answers them all.
    files: {
      [`3/device/${fixtures.apns.token}`]: "",
      [`v1/projects/${PROJECT_ID}/messages:send`]: JSON.stringify({ name: `projects/${PROJECT_ID}/messages/1` }),
      token: JSON.stringify({ access_token: ACCESS_TOKEN, expires_in: 3600, token_type: "Bearer" }),
      [pushPath]: "",
    },
  });
  const f: Fixtures = {
    ...fixtures,
    web: {
      vapid: { ...vapid, subject: "mailto:bench@example.com" },
      subscription: {
        // Through nghttpx: web-push speaks HTTP/1.1 only, and every side gets the same subscription.
        endpoint: `${sink.frontUrl}/${pushPath}`,
        keys: {
          p256dh: subscriber.getPublicKey().toString("base64url"),
          auth: randomBytes(16).toString("base64url"),
        },
      },
    },
  };
  const namespace = `${ctx.env.NATS_NAMESPACE}_senders`;
  const env: Record<string, string> = { ...ctx.env, NATS_NAMESPACE: namespace, HERALD_WEBPUSH_ALLOW_PRIVATE: "true" };
  const nc = await connect({ servers: env.NATS_URL!.split(",") });
  const js = jetstream(nc);
  const names = streamNames(namespace);
  const raw = await rawRequests(sink, f);
  const apps: Partial<Record<Provider, string>> = {};
  const runs: Run[] = [];
  try {
    const ceilingRuns: CeilingRun[] = [];

    /** Runs one side in a child process (bench/peer-*.ts, bench/raw-h2.ts) and reads its figures. */
    const childSide = async (provider: Provider, side: SideKind, round: number): Promise<Run> => {
      const [script, config] = side === "raw" ? rawConfig(raw[provider]) : peerConfig(provider, f, sink, side);
      // The sink idles while the child starts: its CPU over the send loop alone.
      const sinkCpu0 = sinkCpu(sink);
      const done = await runPeerChild(script, config, { NODE_EXTRA_CA_CERTS: env.NODE_EXTRA_CA_CERTS ?? "" }, side);
      return measured(provider, side, round, {
        seconds: done.seconds,
        delivered: done.ok,
        failed: done.failed,
        firstError: done.firstError,
        cpu: { [side]: done.cpuSeconds },
        rss: done.rss,
        sinkCpuPct: ((sinkCpu(sink) - sinkCpu0) / done.seconds) * 100,
      });
    };

    const heraldSide = async (provider: Provider, round: number, stubbed = false): Promise<Run> => {
      const role = `sender-${provider}`;
      const credentialPort = await freePort();
      const stack: BuiltStack = await startBuiltStack({
        releaseDir: ctx.releaseDir,
        roles: ["credential", role],
        // The stub patches the pool's class: the sender must load it from tsc's output, not its bundle's copy.
        unbundled: stubbed ? [role] : undefined,
        providers: { APNS_URL: sink.h2Url, FCM_URL: sink.h2Url, FCM_TOKEN_URL: `${sink.frontUrl}/token` },
        env,
        // The bench talks to the credential service itself (apps and platform configs).
        envFor: {
          credential: { PORT: String(credentialPort) },
          [role]: {
            CREDENTIAL_URL: `http://127.0.0.1:${credentialPort}`,
            ...(stubbed ? { NODE_OPTIONS: `--import ${path.join(root, "bench/stub-exchange.mjs")}` } : {}),
          },
        },
      });
      try {
        if (!apps[provider]) Object.assign(apps, await createApps(`http://127.0.0.1:${credentialPort}`, ctx.apiKey, f));
        const platform = { apns: Platform.IOS, fcm: Platform.ANDROID, webpush: Platform.WEB }[provider];
        const subject = names.delivery(({ apns: "ios", fcm: "android", webpush: "web" } as const)[provider]);
        const token = {
          apns: f.apns.token,
          fcm: f.fcm.token,
          webpush: JSON.stringify(f.web.subscription),
        }[provider];
        const campaignId = randomUUID();
        // Encoded before the clock starts: that is the campaign service's work.
        const batches = Array.from({ length: Math.ceil(N / BATCH_SIZE) }, (_, seq) =>
          toBinary(
            DeliveryBatchSchema,
            deliveryBatch(
              campaignId,
              apps[provider]!,
              platform,
              seq,
              Array.from({ length: Math.min(BATCH_SIZE, N - seq * BATCH_SIZE) }, () => token),
            ),
          ),
        );
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
            if (outcomes.delivered + outcomes.failed >= N) allIn();
          },
        });
        await nc.flush();
        const pids = stack.pids();
        const cpu0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
        const rss = peakRss(pids);
        const sinkCpu0 = sinkCpu(sink);
        const t0 = performance.now();
        try {
          await Promise.all(batches.map((data, seq) => js.publish(subject, data, { msgID: `${campaignId}.${seq}` })));
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            finished,
            new Promise((_, reject) => {
              timer = setTimeout(() => {
                const logs = stack.recentOutput();
                reject(
                  new Error(`${role}: ${outcomes.delivered + outcomes.failed} of ${N} outcomes in 300 s:\n${logs}`),
                );
              }, TIMEOUT_MS);
            }),
          ]).finally(() => clearTimeout(timer));
        } finally {
          sub.unsubscribe();
        }
        const seconds = (performance.now() - t0) / 1000;
        const cpu = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid) - cpu0[n]!]));
        return measured(provider, stubbed ? "stubbed" : "herald", round, {
          seconds,
          delivered: outcomes.delivered,
          failed: outcomes.failed,
          firstError: outcomes.firstError,
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
            side === "herald" || side === "stubbed"
              ? await heraldSide(provider, round, side === "stubbed")
              : await childSide(provider, side, round);
          runs.push(run);
          console.log(
            `  round ${round + 1} ${provider.padEnd(7)} ${sideLabel(provider, side).padEnd(26)} ` +
              `${Math.round(run.perSecond)}/s, CPU ${run.cpuPer10k.toFixed(2)} s per 10k (${Math.round(run.cpuBusyPct)} % busy), ` +
              `sink ${Math.round(run.sinkCpuPct)} %` +
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
  if (side === "raw") return "raw node:http2";
  const peer = PEERS[provider];
  return `${peer.label} ${version(peer.pkg)}${side === "peer-h1" ? " (legacy HTTP/1.1)" : ""}`;
}

function rawConfig(req: RawRequest): [string, unknown] {
  return [
    "bench/raw-h2.ts",
    {
      origin: req.origin,
      path: req.path,
      headers: req.headers,
      body: req.body.toString("base64"),
      n: N,
      concurrency: IN_FLIGHT,
      sessions: 1,
    },
  ];
}

function peerConfig(provider: Provider, f: Fixtures, sink: Sink, side: SideKind): [string, unknown] {
  const h2 = new URL(sink.h2Url);
  const front = new URL(sink.frontUrl);
  const common = { n: N, title: TITLE, body: BODY };
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
          token: f.apns.token,
          concurrency: IN_FLIGHT,
        },
      ];
    case "webpush":
      return [
        PEERS.webpush.script,
        {
          n: N,
          subscription: f.web.subscription,
          vapid: f.web.vapid,
          payload: webPlaintext(),
          ttl: WEB_TTL,
          concurrency: IN_FLIGHT,
        },
      ];
    case "fcm":
      return [
        PEERS.fcm.script,
        {
          ...common,
          transport: side === "peer-h1" ? "h1" : "h2",
          // HTTP/1.1 only through nghttpx; HTTP/2 straight to nghttpd, as sender-fcm.
          host: (side === "peer-h1" ? front : h2).hostname,
          port: Number((side === "peer-h1" ? front : h2).port),
          projectId: PROJECT_ID,
          token: f.fcm.token,
          chunk: FCM_CHUNK,
          calls: Math.max(1, Math.floor(IN_FLIGHT / FCM_CHUNK)),
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

function sinkCpu(sink: Sink): number {
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
    cpu: Record<string, number>;
    rss: Record<string, number>;
    sinkCpuPct: number;
  },
): Run {
  const total = Object.values(m.cpu).reduce((a, b) => a + b, 0);
  return {
    provider,
    side,
    round,
    seconds: m.seconds,
    perSecond: m.delivered / m.seconds,
    delivered: m.delivered,
    failed: m.failed,
    ...(m.firstError ? { firstError: m.firstError } : {}),
    cpuSeconds: m.cpu,
    cpuPer10k: (total / Math.max(1, m.delivered)) * 10_000,
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

/** h2load against the sink with a provider's request: what the sink takes from one client. */
async function measureCeiling(bin: string, p: Provider, req: RawRequest): Promise<Omit<CeilingRun, "round">[]> {
  const h2 = {
    url: `${req.origin}${req.path}`,
    body: req.body,
    headers: req.headers,
    requests: Math.max(N, 50_000),
    clients: 1,
    streams: IN_FLIGHT,
  };
  const where = p === "webpush" ? "nghttpx → nghttpd" : "nghttpd";
  const out: Omit<CeilingRun, "round">[] = [
    { key: p, label: `h2load, 1 connection × ${IN_FLIGHT} streams (${where})`, ...(await h2load(bin, h2)) },
  ];
  if (p === "webpush") {
    out.push({
      key: `${p}-h1`,
      label: `h2load --h1, ${IN_FLIGHT} connections (${where})`,
      ...(await h2load(bin, { ...h2, requests: Math.max(N, 20_000), clients: IN_FLIGHT, streams: 1, h1: true })),
    });
  }
  return out;
}

const TARGETS: { provider: Provider; against: SideKind; min: number; text: string }[] = [
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
        cpuBusyPct: median(rs.map((r) => r.cpuBusyPct)),
        sinkCpuPct: median(rs.map((r) => r.sinkCpuPct)),
        // The sender's own process; the credential service's is in the JSON.
        peakRssMb: Math.max(
          ...rs.map(
            (r) =>
              (side === "herald" || side === "stubbed" ? r.peakRssMb[`sender-${provider}`] : r.peakRssMb[side]) ?? 0,
          ),
        ),
        notDelivered: rs.reduce((n, r) => n + (N - r.delivered), 0),
        firstError: rs.find((r) => r.firstError)?.firstError,
      };
    }),
  );
  const row = (p: Provider, s: SideKind) => rows.find((r) => r.provider === p && r.side === s)!;
  const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  const lines = [
    `## Senders alone: ${N.toLocaleString("en")} notifications per side, ${IN_FLIGHT} in flight`,
    "",
    `Built \`herald sender-*\` (production build) with \`herald credential\`, fed DeliveryBatch messages of ${BATCH_SIZE} ` +
      "devices straight into JetStream, timed from the first publish until the OutcomeBatch messages account for every " +
      "device; each peer and the raw client in its own plain-Node process. Same sink, same payload, " +
      `${IN_FLIGHT} in flight on every side (SENDER_MAX_IN_FLIGHT's default). ${ROUNDS} interleaved round(s), medians. ` +
      `Node ${process.version}, ${CORES} cores; 1-minute load average ` +
      `${Math.min(...runs.map((r) => r.load1)).toFixed(1)}–${Math.max(...runs.map((r) => r.load1)).toFixed(1)} ` +
      "at the end of the runs (anything else running on the machine shares its cores).",
    "",
    "| provider | side | notifications/s | × raw node:http2 | Herald ÷ peer | CPU s per 10k | CPU busy % | peak RSS MB | sink CPU % |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ...PROVIDERS.flatMap((p) => {
      const raw = row(p, "raw");
      const peer = row(p, "peer");
      const ceilingRows = ceilings
        .filter((c) => c.key === p || c.key.startsWith(`${p}-`))
        .map(
          (c) =>
            `| ${PROVIDER_NAMES[p]} | sink ceiling: ${c.label}${c.failed ? ` (${c.failed} failed)` : ""} | ` +
            `${Math.round(c.perSecond)} | | | | | | |`,
        );
      return [
        ...sidesOf(p).map((s) => {
          const r = row(p, s);
          return (
            `| ${PROVIDER_NAMES[p]} | ${r.label}${r.notDelivered ? ` (${r.notDelivered} not delivered: ${r.firstError})` : ""} | ` +
            `${Math.round(r.perSecond)} | ${fmt(r.perSecond / raw.perSecond)} | ` +
            `${s === "herald" ? `${fmt(r.perSecond / peer.perSecond)} (CPU ${fmt(r.cpuPer10k / peer.cpuPer10k)})` : ""} | ` +
            `${fmt(r.cpuPer10k)} | ${Math.round(r.cpuBusyPct)} | ${Math.round(r.peakRssMb)} | ${Math.round(r.sinkCpuPct)} |`
          );
        }),
        ...ceilingRows,
      ];
    }),
    "",
    "| target | measured | met |",
    "|---|---:|---|",
    ...TARGETS.filter((t) => PROVIDERS.includes(t.provider)).map((t) => {
      const ratio = row(t.provider, "herald").perSecond / row(t.provider, t.against).perSecond;
      const shown = t.against === "raw" ? `${Math.round(ratio * 100)} %` : `${ratio.toFixed(2)} ×`;
      return `| ${t.text} | ${shown} | ${ratio >= t.min ? "yes" : "**no**"} |`;
    }),
    ...(PROVIDERS.includes("apns") ? ["", pipelineLimit(row("apns", "stubbed"), row("apns", "raw"))] : []),
    "",
    "Notes:",
    "",
    "- Herald's CPU is the sender's and the credential service's (NATS server not counted); its peak RSS is the " +
      "sender process's. CPU busy %: CPU seconds ÷ wall seconds of the side's processes (100 = one core throughout). " +
      "Sink CPU %: nghttpd + nghttpx over the same time.",
    `- Herald's processes run with the chart's default V8 settings (scripts/processes.mjs; the image's ` +
      `NODE_OPTIONS are ${HERALD_NODE_OPTIONS}): ` +
      ["credential", "sender-apns", "sender-fcm", "sender-webpush"]
        .map((role) => `${role} ${[...nodeFlagsOf(role), `NODE_OPTIONS="${nodeOptionsOf(role)}"`].join(" ")}`)
        .join("; ") +
      ". The peers and the raw client run with Node's defaults.",
    `- Sink: nghttp2's nghttpd (1 worker, ${SINK_STREAMS} streams) serving a docroot over TLS with the simulator's ` +
      "certificate: one device token, one FCM registration token and one Web Push subscription for every device. " +
      "Web Push goes through nghttpx (h2 and HTTP/1.1 by ALPN, 1 worker) in front of a cleartext nghttpd on the same " +
      "docroot for every side, because web-push speaks HTTP/1.1 only and nghttpd HTTP/2 only; sender-fcm's OAuth " +
      "token endpoint (HTTP/1.1) is a file behind the same nghttpx.",
    `- @parse/node-apn: Provider with token auth pointed at the sink with its \`address\`/\`port\` options; one ` +
      `Notification sent device by device, ${IN_FLIGHT} in flight.`,
    `- web-push: sendNotification per message (aes128gcm encryption and a VAPID JWT per message), keep-alive ` +
      `https.Agent with up to ${IN_FLIGHT} sockets, ${IN_FLIGHT} in flight; Herald encrypts per message too and signs ` +
      "one VAPID JWT per origin.",
    `- firebase-admin: sendEach of ${FCM_CHUNK} messages, ${Math.max(1, Math.floor(IN_FLIGHT / FCM_CHUNK))} calls at ` +
      "once. It has no endpoint option (`fcm.googleapis.com` is a constant) and no FCM emulator. Its default HTTP/2 " +
      "transport (a new session per sendEach call) ignores AppOptions.httpAgent, so bench/peer-fcm.ts wraps " +
      "node:http2's connect() in its own process: sessions for fcm.googleapis.com open to nghttpd (TLS, SNI " +
      "localhost), and their requests get `:scheme: https` instead of the SDK's `https:` (the URL's protocol with its " +
      "colon), which nghttp2 refuses as a PROTOCOL_ERROR and Google tolerates. The legacy HTTP/1.1 transport " +
      "(enableLegacyHttpTransport) takes AppOptions.httpAgent: a keep-alive agent whose sockets open to nghttpx, " +
      "no patching. The OAuth token comes from a custom Credential on both (google-auth-library posts to " +
      "oauth2.googleapis.com whatever the key file's token_uri says). Everything else is the SDK's own.",
    "- raw node:http2: the exact request the Herald sender sends (headers and body built once with the sender's own " +
      `payload code), 1 session, ${IN_FLIGHT} streams in flight.`,
    "- HTTP/2 exchange stubbed: the same built sender-apns, with bench/stub-exchange.mjs preloaded: every request of " +
      "its HTTP/2 pool answers at once with an empty 200 and nothing reaches the sink. It measures the sender's own " +
      "work per notification: JetStream, protobuf, batching, send slots, provider token and headers, metrics, outcomes.",
  ];
  const table = lines.join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    `senders${QUICK ? "-quick" : ""}`,
    { devices: N, inFlight: IN_FLIGHT, rounds: ROUNDS, node: process.version, ceilings, ceilingRuns, runs, rows },
    table,
  );
}
