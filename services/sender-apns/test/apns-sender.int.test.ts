import { createPublicKey, randomBytes, randomUUID } from "node:crypto";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { Platform } from "@herald/proto/common";
import {
  DeliveryBatchSchema,
  type NotificationOptionsSchema,
  DeviceInvalidatedSchema,
  OutcomeBatchSchema,
  OutcomeKind,
  type DeliveryBatch,
  type DeviceInvalidated,
  type OutcomeBatch,
} from "@herald/proto/delivery";
import { createLogger, readEnv, streamNames, type StreamNames } from "@herald/runtime";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { configSpec as simConfigSpec } from "@herald/provider-sim/config";
import { start as startSim, type ProviderSim } from "@herald/provider-sim/server";
import type { RunningSender } from "@herald/sender";
import {
  cleanUp as cleanUpCredential,
  rawPool,
  startService as startCredential,
  testConfig as credentialConfig,
  type Running,
} from "../../credential/test/harness.js";
import { makeApnsKey } from "../../../test/support/credential-fixtures.js";
import { deleteNamespaceStreams } from "../../../test/support/nats-streams.js";
import { uniqueName } from "../../../test/support/unique.js";
import { loadConfig } from "../src/config.js";
import { start } from "../src/server.js";

// The APNs sender end to end below the gateway: real credential service holding the
// .p8, real JetStream, and the strict simulator as APNs (ES256 provider tokens, one
// stream before the first valid token, a low stream limit after it, every reason).
const log = createLogger("test", "silent");
const STREAM_LIMIT = 20;
const MAX_CONNECTIONS = 3;
const TOPIC = "com.example.herald";
let sim: ProviderSim;
let admin: SimAdminClient;
let credential: Running;
let credCfg: ReturnType<typeof credentialConfig>;
let orgId: string;
let nc: NatsConnection;
let names: StreamNames;
let appId: string;
const namespace = uniqueName("apnsns");
const running: RunningSender[] = [];

async function startSender(overrides: Record<string, string> = {}) {
  const infra = inject("infra");
  const sender = await start(
    loadConfig({
      NATS_URL: infra.natsUrl,
      NATS_NAMESPACE: namespace,
      ADMIN_PORT: "0",
      CREDENTIAL_URL: `http://127.0.0.1:${credential.app.port}`,
      APNS_URL: sim.publicUrl,
      APNS_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      SENDER_MAX_IN_FLIGHT: "1000",
      SENDER_RETRY_BASE_MS: "20",
      SENDER_RETRY_MAX_DELAY_MS: "100",
      SENDER_RETRY_MAX_ATTEMPTS: "4",
      LOG_LEVEL: "silent",
      ...overrides,
    }),
    { log },
  );
  running.push(sender);
  return sender;
}

/** An iOS app whose APNs config holds `key` (as uploaded by its owner). */
async function iosApp(key: { p8: string; keyId: string; teamId: string }): Promise<string> {
  // Bundle ids are unique per org; every app here pushes to the one topic the simulated devices run.
  const app = await credential.client.createApp({
    orgId,
    name: "ios",
    platform: Platform.IOS,
    bundleId: `${TOPIC}.${randomBytes(4).toString("hex")}`,
  });
  const id = app.app!.id;
  await credential.client.putPlatformConfig({
    appId: id,
    credentials: {
      case: "apns",
      value: { p8Key: key.p8, keyId: key.keyId, teamId: key.teamId, topic: TOPIC, environment: "sandbox" },
    },
  });
  return id;
}

/** Apple knows the key: the simulator gets its public half only. */
async function registerWithApple(key: { p8: string; keyId: string; teamId: string }) {
  const publicKeyPem = createPublicKey(key.p8).export({ type: "spki", format: "pem" }).toString();
  await admin.registerApnsKey({
    team_id: key.teamId,
    key_id: key.keyId,
    topics: [TOPIC],
    public_key_pem: publicKeyPem,
  });
}

type BatchInput = Partial<Pick<DeliveryBatch, "dataJson" | "ttlSeconds" | "collapseId" | "imageUrl">> & {
  notification?: MessageInitShape<typeof NotificationOptionsSchema>;
  app?: string;
  payloads?: { index: number; title: string; body: string }[];
};

async function publish(targets: { id: string; token: string }[], extra: BatchInput = {}) {
  const campaignId = randomUUID();
  const size = 500;
  for (let seq = 0; seq * size < targets.length; seq++) {
    const batch = create(DeliveryBatchSchema, {
      campaignId,
      appId: extra.app ?? appId,
      platform: Platform.IOS,
      sequence: BigInt(seq + 1),
      payloads: extra.payloads ?? [
        { index: 0, title: "Hallo", body: "Wie geht's?" },
        { index: 1, title: "Hello", body: "How are you?" },
      ],
      targets: targets
        .slice(seq * size, (seq + 1) * size)
        .map((t, i) => ({ deviceId: t.id, pushToken: t.token, payloadIndex: i % 2 })),
      dataJson: extra.dataJson ?? JSON.stringify({ action_url: "https://example.com/a" }),
      ttlSeconds: extra.ttlSeconds ?? 3600,
      collapseId: extra.collapseId,
      imageUrl: extra.imageUrl,
      notification: extra.notification,
      createdAt: timestampFromDate(new Date()),
    });
    await jetstream(nc).publish(names.delivery("ios"), toBinary(DeliveryBatchSchema, batch), {
      msgID: `${campaignId}.${seq}`,
    });
  }
  return campaignId;
}

/** Reads a stream subject with a throwaway consumer until `expected` items arrived. */
async function drain<T>(
  stream: string,
  subject: string,
  decode: (data: Uint8Array) => T[],
  expected: number,
  timeoutMs = 30_000,
): Promise<T[]> {
  const jsm = await jetstreamManager(nc);
  const durable = `t${randomBytes(4).toString("hex")}`;
  await jsm.consumers.add(stream, { durable_name: durable, filter_subject: subject, ack_policy: AckPolicy.Explicit });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  const all: T[] = [];
  const deadline = Date.now() + timeoutMs;
  while (all.length < expected && Date.now() < deadline) {
    try {
      for await (const m of await consumer.fetch({ max_messages: 100, expires: 1000 })) {
        all.push(...decode(m.data));
        m.ack();
      }
    } catch (err) {
      // A busy event loop (sender, simulator and services share this process) can miss a pull's heartbeat.
      if (!String(err).includes("heartbeats missed")) throw err;
    }
  }
  await jsm.consumers.delete(stream, durable);
  return all;
}

const outcomes = (campaignId: string, expected: number): Promise<OutcomeBatch["outcomes"]> =>
  drain(names.outcomesStream, names.outcome(campaignId), (d) => fromBinary(OutcomeBatchSchema, d).outcomes, expected);

async function devices(n: number) {
  const tokens = await admin.createApnsDevices(TOPIC, n);
  return tokens.map((token) => ({ id: randomUUID(), token }));
}

beforeAll(async () => {
  const infra = inject("infra");
  sim = await startSim(
    readEnv(simConfigSpec, {
      PORT: "0",
      ADMIN_PORT: "0",
      LOG_LEVEL: "silent",
      SIM_SEED: "11",
      SIM_APNS_MAX_STREAMS: String(STREAM_LIMIT),
    }),
    { log },
  );
  admin = new SimAdminClient(`http://127.0.0.1:${sim.adminPort}`);
  credCfg = credentialConfig({ logLevel: "silent" });
  credential = await startCredential(credCfg);
  const pool = rawPool(credCfg);
  const { rows } = await pool.query<{ id: string }>("SELECT id FROM orgs LIMIT 1");
  await pool.end();
  orgId = rows[0]!.id;
  const key = makeApnsKey();
  await registerWithApple(key);
  appId = await iosApp(key);
  nc = await connect({ servers: infra.natsUrl });
  names = streamNames(namespace);
});

afterEach(async () => {
  await admin.clearFaults("apns");
  for (const s of running.splice(0)) await s.close();
});

afterAll(async () => {
  await nc?.close();
  await credential?.close();
  await sim?.close();
  await cleanUpCredential(credCfg);
  await deleteNamespaceStreams(inject("infra").natsUrl, namespace);
});

describe("APNs sender", () => {
  it("delivers 1,000 alerts within the advertised stream limit, one stream per connection until the token is accepted", async () => {
    await admin.clearApnsConnections();
    const sender = await startSender();
    const targets = await devices(1000);
    const campaignId = await publish(targets, { collapseId: "news" });
    const got = await outcomes(campaignId, 1000);
    expect(got).toHaveLength(1000);
    expect(new Set(got.map((o) => o.deviceId)).size).toBe(1000);
    expect(got.every((o) => o.kind === OutcomeKind.DELIVERED && o.attempts === 1)).toBe(true);

    const byToken = new Map((await admin.allDeliveries({ platform: "apns" })).map((d) => [d.device_token, d]));
    const expiration = Math.floor(Date.now() / 1000) + 3600;
    for (const [i, t] of targets.entries()) {
      const d = byToken.get(t.token)!;
      expect(d).toMatchObject({ topic: TOPIC, push_type: "alert", priority: 10, collapse_id: "news" });
      expect(Math.abs(d.expiration! - expiration)).toBeLessThan(60);
      const [title, body] = i % 2 === 0 ? ["Hallo", "Wie geht's?"] : ["Hello", "How are you?"];
      expect(JSON.parse(d.payload)).toEqual({
        action_url: "https://example.com/a",
        herald_campaign_id: campaignId,
        aps: { alert: { title, body }, sound: "default" },
      });
    }

    const { connections, violations } = await admin.apnsConnections();
    expect(violations).toBe(0);
    expect(connections.length).toBeGreaterThan(0);
    expect(connections.length).toBeLessThanOrEqual(MAX_CONNECTIONS);
    for (const c of connections) {
      expect(c.violations).toBe(0);
      expect(c.max_concurrent_streams).toBeLessThanOrEqual(STREAM_LIMIT);
    }
    // The pool used what it was allowed, not one stream at a time.
    expect(Math.max(...connections.map((c) => c.max_concurrent_streams))).toBe(STREAM_LIMIT);

    const metrics = await (await fetch(`http://127.0.0.1:${sender.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/^herald_apns_connections\{[^}]*\} [1-9]/m);
    expect(metrics).toMatch(/^herald_apns_streams_in_use\{[^}]*\} 0$/m);
    expect(metrics).toMatch(/^herald_apns_token_refreshes_total\{[^}]*\} 1$/m);
  });

  it("sends data-only sends as background pushes and marks alerts with an image mutable", async () => {
    await startSender();
    const [silent, picture] = await Promise.all([devices(2), devices(2)]);
    const silentId = await publish(silent, {
      payloads: [
        { index: 0, title: "", body: "" },
        { index: 1, title: "", body: "" },
      ],
      dataJson: JSON.stringify({ sync: "inbox" }),
    });
    const pictureId = await publish(picture, { imageUrl: "https://cdn.example.com/i.png", ttlSeconds: 0 });
    expect((await outcomes(silentId, 2)).every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
    expect((await outcomes(pictureId, 2)).every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
    const all = await admin.allDeliveries({ platform: "apns" });
    for (const t of silent) {
      const d = all.find((x) => x.device_token === t.token)!;
      expect(d).toMatchObject({ push_type: "background", priority: 5 });
      expect(JSON.parse(d.payload)).toEqual({
        sync: "inbox",
        herald_campaign_id: silentId,
        aps: { "content-available": 1 },
      });
    }
    for (const t of picture) {
      const d = all.find((x) => x.device_token === t.token)!;
      expect(d).toMatchObject({ push_type: "alert", expiration: null });
      expect(JSON.parse(d.payload)).toMatchObject({
        image_url: "https://cdn.example.com/i.png",
        herald_campaign_id: pictureId,
        aps: { "mutable-content": 1 },
      });
    }
  });

  it("puts each delivery option in its exact APNs field: sound, badge, thread-id, mutable-content, silent pushes", async () => {
    await startSender();
    const [styled, counted, silent] = await Promise.all([devices(1), devices(1), devices(1)]);
    const styledId = await publish(styled, {
      notification: { sound: "chime.caf", badge: 3, threadId: "chat-42", mutableContent: true },
    });
    const countedId = await publish(counted, { notification: { badgeIncrement: 2 } });
    const silentId = await publish(silent, { notification: { contentAvailable: true } });
    for (const id of [styledId, countedId, silentId]) {
      expect((await outcomes(id, 1)).map((o) => o.kind)).toEqual([OutcomeKind.DELIVERED]);
    }
    const all = await admin.allDeliveries({ platform: "apns" });
    const of = (t: { token: string }) => all.find((x) => x.device_token === t.token)!;
    expect(of(styled[0]!)).toMatchObject({ push_type: "alert", priority: 10 });
    expect(JSON.parse(of(styled[0]!).payload).aps).toEqual({
      alert: { title: "Hallo", body: "Wie geht's?" },
      sound: "chime.caf",
      badge: 3,
      "thread-id": "chat-42",
      "mutable-content": 1,
    });
    // No native increment: the extension gets the amount beside aps, and mutable-content wakes it.
    expect(JSON.parse(of(counted[0]!).payload)).toMatchObject({
      herald_badge_increment: 2,
      aps: { sound: "default", "mutable-content": 1 },
    });
    expect(JSON.parse(of(counted[0]!).payload).aps.badge).toBeUndefined();
    expect(of(silent[0]!)).toMatchObject({ push_type: "background", priority: 5 });
    expect(JSON.parse(of(silent[0]!).payload)).toEqual({
      action_url: "https://example.com/a",
      herald_campaign_id: silentId,
      aps: { "content-available": 1 },
    });
  });

  it("bounces dead tokens and publishes device.invalidated with the 410's timestamp", async () => {
    await startSender();
    const targets = await devices(5);
    const seenDeadAt = Date.now() - 3_600_000;
    await admin.unregisterApnsDevice(targets[0]!.token, seenDeadAt);
    await admin.expireApnsDevice(targets[1]!.token);
    await admin.markApnsDeviceBad(targets[2]!.token);
    const got = await outcomes(await publish(targets), 5);
    const byId = new Map(got.map((o) => [o.deviceId, [OutcomeKind[o.kind], o.reason]]));
    expect(targets.map((t) => byId.get(t.id))).toEqual([
      ["BOUNCED", "Unregistered"],
      ["BOUNCED", "ExpiredToken"],
      ["BOUNCED", "BadDeviceToken"],
      ["DELIVERED", ""],
      ["DELIVERED", ""],
    ]);

    const mine = new Set<string>(targets.map((t) => t.id));
    const events = (
      await drain(
        names.eventsStream,
        names.deviceInvalidated,
        (d) => [fromBinary(DeviceInvalidatedSchema, d)],
        3,
        5_000,
      )
    ).filter((e: DeviceInvalidated) => mine.has(e.deviceId));
    expect(events).toHaveLength(3);
    const unregistered = events.find((e) => e.deviceId === targets[0]!.id)!;
    expect(unregistered).toMatchObject({ appId, platform: Platform.IOS, reason: "Unregistered" });
    expect(timestampDate(unregistered.observedAt!).getTime()).toBe(seenDeadAt);
  });

  it("fails every device with a readable reason when Apple does not know the key, or the team is wrong", async () => {
    await startSender();
    const forged = await iosApp(makeApnsKey());
    const known = makeApnsKey();
    await registerWithApple(known);
    const wrongTeam = await iosApp({ ...known, teamId: makeApnsKey().teamId });
    for (const app of [forged, wrongTeam]) {
      const targets = await devices(30);
      const got = await outcomes(await publish(targets, { app }), 30);
      expect(new Set(got.map((o) => o.deviceId))).toEqual(new Set(targets.map((t) => t.id)));
      for (const o of got) {
        expect(o.kind).toBe(OutcomeKind.FAILED);
        expect(o.reason).toBe(
          "InvalidProviderToken: APNs rejected the provider token; check the .p8 key, key id and team id",
        );
      }
    }
  });

  it("loses nothing to GOAWAYs and dropped streams mid-batch: every device one outcome, delivered once", async () => {
    await startSender();
    await admin.clearApnsConnections();
    const targets = await devices(400);
    await admin.setFaults("apns", { goaway_rate: 0.02, drop_rate: 0.05 });
    const got = await outcomes(await publish(targets), 400);
    expect(got).toHaveLength(400);
    expect(new Set(got.map((o) => o.deviceId)).size).toBe(400);
    expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
    expect(got.some((o) => o.attempts > 1)).toBe(true); // dropped streams were retried

    const counts = await admin.deliveryCount("apns");
    for (const t of targets) expect(counts.by_target[t.token]).toBe(1);
    const { connections, violations } = await admin.apnsConnections();
    expect(violations).toBe(0);
    // Connections that got GOAWAY were replaced.
    expect(connections.length).toBeGreaterThan(MAX_CONNECTIONS);
  });

  it("ends throttled after retries when APNs keeps answering 429", async () => {
    await startSender();
    const targets = await devices(10);
    await admin.setFaults("apns", { throttle_rate: 1 });
    const got = await outcomes(await publish(targets), 10);
    expect(got.map((o) => [OutcomeKind[o.kind], o.reason, o.attempts])).toEqual(
      Array(10).fill(["THROTTLED", "TooManyRequests", 4]),
    );
  });

  it("retries 503 Shutdown on new connections and delivers", async () => {
    await startSender();
    const targets = await devices(20);
    await admin.setFaults("apns", { shutdown: true, remaining: 10 });
    const got = await outcomes(await publish(targets), 20);
    expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
    expect(got.filter((o) => o.attempts > 1).length).toBeGreaterThan(0);
  });
});
