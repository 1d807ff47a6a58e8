import { createPublicKey, randomBytes, randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Platform } from "@herald/proto/common";
import { OutcomeKind } from "@herald/proto/delivery";
import type { RunningSender } from "@herald/sender";
import { makeApnsKey } from "../../../test/support/credential-fixtures.js";
import { type BatchFields, log, SenderTestBed, type Target } from "../../../test/support/sender-bed.js";
import { loadConfig } from "../src/config.js";
import { start } from "../src/server.js";

// The APNs sender end to end below the gateway: real credential service holding the
// .p8, real JetStream, and the strict simulator as APNs (ES256 provider tokens, one
// stream before the first valid token, a low stream limit after it, every reason).
const STREAM_LIMIT = 20;
const MAX_CONNECTIONS = 3;
const TOPIC = "com.example.herald";
const bed = new SenderTestBed("ios", { SIM_SEED: "11", SIM_APNS_MAX_STREAMS: String(STREAM_LIMIT) });
let appId: string;
const running: RunningSender[] = [];

async function startSender(overrides: Record<string, string> = {}) {
  const sender = await start(
    loadConfig(
      bed.senderEnv({
        APNS_URL: bed.sim.publicUrl,
        APNS_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
        SENDER_MAX_IN_FLIGHT: "1000",
        ...overrides,
      }),
    ),
    { log },
  );
  running.push(sender);
  return sender;
}

/** An iOS app whose APNs config holds `key` (as uploaded by its owner). */
async function iosApp(key: { p8: string; keyId: string; teamId: string }): Promise<string> {
  // Bundle ids are unique per org; every app here pushes to the one topic the simulated devices run.
  const id = await bed.createApp(Platform.IOS, "ios", `${TOPIC}.${randomBytes(4).toString("hex")}`);
  await bed.credential.client.putPlatformConfig({
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
  await bed.admin.registerApnsKey({
    team_id: key.teamId,
    key_id: key.keyId,
    topics: [TOPIC],
    public_key_pem: publicKeyPem,
  });
}

/** Publishes `targets` as one campaign of the app (another with `app`), in batches of 500; answers its id. */
const publish = (targets: Target[], { app, ...fields }: BatchFields & { app?: string } = {}) =>
  bed.publish(targets, { appId: app ?? appId, ...fields }, 500);

const outcomes = (campaignId: string, expected: number) => bed.outcomes(campaignId, expected);

async function devices(n: number) {
  const tokens = await bed.admin.createApnsDevices(TOPIC, n);
  return tokens.map((token) => ({ id: randomUUID(), token }));
}

beforeAll(async () => {
  await bed.setUp();
  const key = makeApnsKey();
  await registerWithApple(key);
  appId = await iosApp(key);
});

afterEach(async () => {
  await bed.admin.clearFaults("apns");
  for (const s of running.splice(0)) await s.close();
});

afterAll(() => bed.tearDown());

describe("APNs sender", () => {
  it("delivers 1,000 alerts within the advertised stream limit, one stream per connection until the token is accepted", async () => {
    await bed.admin.clearApnsConnections();
    const sender = await startSender();
    const targets = await devices(1000);
    const campaignId = await publish(targets, { collapseId: "news" });
    const got = await outcomes(campaignId, 1000);
    expect(got).toHaveLength(1000);
    expect(new Set(got.map((o) => o.deviceId)).size).toBe(1000);
    expect(got.every((o) => o.kind === OutcomeKind.DELIVERED && o.attempts === 1)).toBe(true);

    const byToken = new Map((await bed.admin.allDeliveries({ platform: "apns" })).map((d) => [d.device_token, d]));
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

    const { connections, violations } = await bed.admin.apnsConnections();
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
    const all = await bed.admin.allDeliveries({ platform: "apns" });
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
    const all = await bed.admin.allDeliveries({ platform: "apns" });
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
    await bed.admin.unregisterApnsDevice(targets[0]!.token, seenDeadAt);
    await bed.admin.expireApnsDevice(targets[1]!.token);
    await bed.admin.markApnsDeviceBad(targets[2]!.token);
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
    const events = (await bed.invalidations(3, 5_000)).filter((e) => mine.has(e.deviceId));
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
    await bed.admin.clearApnsConnections();
    const targets = await devices(400);
    await bed.admin.setFaults("apns", { goaway_rate: 0.02, drop_rate: 0.05 });
    const got = await outcomes(await publish(targets), 400);
    expect(got).toHaveLength(400);
    expect(new Set(got.map((o) => o.deviceId)).size).toBe(400);
    expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
    expect(got.some((o) => o.attempts > 1)).toBe(true); // dropped streams were retried

    const counts = await bed.admin.deliveryCount("apns");
    for (const t of targets) expect(counts.by_target[t.token]).toBe(1);
    const { connections, violations } = await bed.admin.apnsConnections();
    expect(violations).toBe(0);
    // Connections that got GOAWAY were replaced.
    expect(connections.length).toBeGreaterThan(MAX_CONNECTIONS);
  });

  it("ends throttled after retries when APNs keeps answering 429", async () => {
    await startSender();
    const targets = await devices(10);
    await bed.admin.setFaults("apns", { throttle_rate: 1 });
    const got = await outcomes(await publish(targets), 10);
    expect(got.map((o) => [OutcomeKind[o.kind], o.reason, o.attempts])).toEqual(
      Array(10).fill(["THROTTLED", "TooManyRequests", 4]),
    );
  });

  it("retries 503 Shutdown on new connections and delivers", async () => {
    await startSender();
    const targets = await devices(20);
    await bed.admin.setFaults("apns", { shutdown: true, remaining: 10 });
    const got = await outcomes(await publish(targets), 20);
    expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
    expect(got.filter((o) => o.attempts > 1).length).toBeGreaterThan(0);
  });
});
