import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Platform } from "@herald/proto/common";
import { OutcomeKind } from "@herald/proto/delivery";
import { createLogger } from "@herald/runtime";
import type { CreatedSubscription } from "@herald/provider-sim/admin-client";
import { type BatchFields, log, SenderTestBed, type Target } from "../../../test/support/sender-bed.js";
import { loadConfig } from "../src/config.js";
import { start } from "../src/server.js";
import { waitUntil } from "../../../test/support/wait.js";

// The web push sender end to end below the gateway: real credential service, real
// JetStream, the strict simulator as push service, RFC 8291 payloads decrypted there.
const bed = new SenderTestBed("web");
let appId: string;
let vapidPublicKey: string;

const senderConfig = (overrides: Record<string, string> = {}) =>
  loadConfig(bed.senderEnv({ HERALD_WEBPUSH_ALLOW_PRIVATE: "1", ...overrides }));

const subscriptions = (n: number) => bed.admin.createWebPushSubscriptions(vapidPublicKey, n);
/** A subscription as a delivery batch's target (`sub`: the simulator's id of it). */
const targetOf = (s: CreatedSubscription) => ({ id: randomUUID(), token: JSON.stringify(s.subscription), sub: s.id });

/** Publishes one delivery batch of the web app; returns the campaign id. */
const publishBatch = (targets: Target[], extra: BatchFields = {}) =>
  bed.publish(targets, { appId, highPriority: true, collapseId: "news", ...extra });

const outcomes = (campaignId: string, expected: number) => bed.outcomes(campaignId, expected);

beforeAll(async () => {
  await bed.setUp();
  appId = await bed.createApp(Platform.WEB, "web", "com.example.web");
  const cfg = await bed.credential.client.putPlatformConfig({
    appId,
    credentials: { case: "vapid", value: { publicKey: "", privateKey: "", subject: "mailto:ops@example.com" } },
  });
  vapidPublicKey = cfg.config!.details.case === "vapid" ? cfg.config!.details.value.publicKey : "";
});

afterAll(() => bed.tearDown());

describe("web push sender", () => {
  it("delivers one encrypted, localized payload per device and reports each outcome", async () => {
    const sender = await start(senderConfig(), { log });
    try {
      const subs = await subscriptions(40);
      const targets = subs.map(targetOf);
      const campaignId = await publishBatch(targets);
      const got = await outcomes(campaignId, 40);
      expect(got).toHaveLength(40);
      expect(new Set(got.map((o) => o.deviceId))).toEqual(new Set(targets.map((t) => t.id)));
      expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);

      const deliveries = await bed.admin.allDeliveries({ platform: "webpush" });
      for (const [i, t] of targets.entries()) {
        const mine = deliveries.filter((d) => d.subscription_id === t.sub);
        expect(mine).toHaveLength(1);
        expect(JSON.parse(mine[0]!.payload)).toEqual({
          campaign_id: campaignId,
          title: i % 2 === 0 ? "Hallo" : "Hello",
          body: i % 2 === 0 ? "Wie geht's?" : "How are you?",
          data: { action_url: "https://example.com/a" },
        });
        expect(mine[0]!.headers).toMatchObject({ ttl: 3600, urgency: "high", topic: "news" });
      }
    } finally {
      await sender.close();
    }
  });

  it("hands icon, badge image, actions and the badge count to the service worker under their Notifications API names", async () => {
    const sender = await start(senderConfig(), { log });
    try {
      const [sub] = await subscriptions(1);
      const target = targetOf(sub!);
      const campaignId = await publishBatch([target], {
        notification: {
          webIconUrl: "https://example.com/icon.png",
          webBadgeUrl: "https://example.com/badge.png",
          webActions: [
            { action: "open", title: "Open", iconUrl: "https://example.com/open.png" },
            { action: "later", title: "Later" },
          ],
          badge: 5,
          sound: "chime",
        },
      });
      expect((await outcomes(campaignId, 1)).map((o) => o.kind)).toEqual([OutcomeKind.DELIVERED]);
      const mine = (await bed.admin.allDeliveries({ platform: "webpush" })).filter(
        (d) => d.subscription_id === sub!.id,
      );
      // Web Push has no sound: it is not in the payload.
      expect(JSON.parse(mine[0]!.payload)).toEqual({
        campaign_id: campaignId,
        title: "Hallo",
        body: "Wie geht's?",
        data: { action_url: "https://example.com/a" },
        icon: "https://example.com/icon.png",
        badge: "https://example.com/badge.png",
        actions: [
          { action: "open", title: "Open", icon: "https://example.com/open.png" },
          { action: "later", title: "Later" },
        ],
        badge_count: 5,
      });
    } finally {
      await sender.close();
    }
  });

  it("bounces gone subscriptions and publishes device.invalidated for them", async () => {
    const sender = await start(senderConfig(), { log });
    try {
      const subs = await subscriptions(6);
      await bed.admin.markWebPushGone(subs[0]!.id);
      await bed.admin.markWebPushGone(subs[1]!.id);
      const targets = subs.map(targetOf);
      const campaignId = await publishBatch(targets);
      const got = await outcomes(campaignId, 6);
      const bounced = got
        .filter((o) => o.kind === OutcomeKind.BOUNCED)
        .map((o) => o.deviceId)
        .sort();
      expect(bounced).toEqual([targets[0]!.id, targets[1]!.id].sort());

      const invalidated = (await bed.invalidations()).map((ev) => ev.deviceId).filter((id) => bounced.includes(id));
      expect(invalidated.sort()).toEqual(bounced);
    } finally {
      await sender.close();
    }
  });

  it("retries 5xx and 429 with backoff and counts exhausted retries as failed or throttled", async () => {
    const sender = await start(senderConfig(), { log });
    try {
      const subs = await subscriptions(10);
      const targets = subs.map(targetOf);
      // Transient: the first 6 requests fail, the retries get through.
      await bed.admin.setFaults("webpush", { error_rate: 1, error_status: 503, remaining: 6 });
      let got = await outcomes(await publishBatch(targets), 10);
      expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
      expect(got.some((o) => o.attempts > 1)).toBe(true);

      // Persistent throttling: every device ends throttled after its attempts.
      await bed.admin.setFaults("webpush", { throttle_rate: 1, retry_after_s: 0 });
      got = await outcomes(await publishBatch(targets), 10);
      expect(got.map((o) => [OutcomeKind[o.kind], o.attempts])).toEqual(Array(10).fill(["THROTTLED", 4]));

      await bed.admin.setFaults("webpush", { error_rate: 1, error_status: 500 });
      got = await outcomes(await publishBatch(targets), 10);
      expect(got.every((o) => o.kind === OutcomeKind.FAILED && o.reason === "ServerError:500")).toBe(true);
    } finally {
      await bed.admin.clearFaults("webpush");
      await sender.close();
    }
  });

  it("loses nothing to GOAWAYs and dropped streams mid-batch: every device one outcome, delivered once", async () => {
    const lines: string[] = [];
    const sender = await start(senderConfig(), {
      log: createLogger("sender-webpush", "info", { write: (line: string) => void lines.push(line) }),
    });
    /** One campaign in batches of 100 (several in flight at once); every outcome and how often each subscription got it. */
    const send = async (subs: CreatedSubscription[]) => {
      const targets = subs.map(targetOf);
      const campaignId = randomUUID();
      for (let b = 0; b * 100 < targets.length; b++)
        await publishBatch(targets.slice(b * 100, (b + 1) * 100), { campaignId, sequence: BigInt(b + 1) });
      const got = await outcomes(campaignId, targets.length);
      expect(got).toHaveLength(targets.length);
      expect(new Set(got.map((o) => o.deviceId))).toEqual(new Set(targets.map((t) => t.id)));
      const counts = await bed.admin.deliveryCount("webpush");
      return { got, delivered: subs.map((s) => counts.by_target[s.id]) };
    };
    try {
      // GOAWAY alone: the streams the push service never processed are re-sent by the
      // pool on a new connection, so no device needs a second attempt.
      let subs = await subscriptions(400);
      await bed.admin.setFaults("webpush", { goaway_rate: 0.03 });
      let { got, delivered } = await send(subs);
      expect(got.map((o) => [OutcomeKind[o.kind], o.attempts])).toEqual(Array(400).fill(["DELIVERED", 1]));
      expect(delivered).toEqual(Array(400).fill(1));
      expect(lines.filter((l) => l.includes("Web Push connection going away")).length).toBeGreaterThan(1);

      // GOAWAYs and streams cut after the push service took them (retried as new attempts).
      subs = await subscriptions(400);
      await bed.admin.setFaults("webpush", { goaway_rate: 0.02, drop_rate: 0.05 });
      ({ got, delivered } = await send(subs));
      expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
      expect(got.some((o) => o.attempts > 1)).toBe(true);
      expect(delivered).toEqual(Array(400).fill(1));

      // Endpoint paths (the subscription's secret) and VAPID tokens reached no log line.
      const logged = lines.join("");
      for (const s of subs) expect(logged).not.toContain(new URL(s.subscription.endpoint).pathname);
      expect(logged).not.toMatch(/vapid t=/i);
    } finally {
      await bed.admin.clearFaults("webpush");
      await sender.close();
    }
  }, 60_000);

  it("fails devices whose payload is too large, and unconfigured apps, with a reason", async () => {
    const sender = await start(senderConfig(), { log });
    try {
      const [sub] = await subscriptions(1);
      const target = targetOf(sub!);
      const big = await outcomes(
        await publishBatch([target], { dataJson: JSON.stringify({ x: "y".repeat(5000) }) }),
        1,
      );
      expect(big.map((o) => [OutcomeKind[o.kind], o.reason])).toEqual([["FAILED", "PayloadTooLarge"]]);
    } finally {
      await sender.close();
    }
  });

  it("hands back unfinished work on shutdown and a new sender completes it", async () => {
    await bed.admin.setFaults("webpush", { latency_ms: 300 });
    const subs = await subscriptions(30);
    const targets = subs.map(targetOf);
    const first = await start(senderConfig({ SENDER_MAX_IN_FLIGHT: "2", SENDER_DRAIN_MS: "100" }), { log });
    const campaignId = await publishBatch(targets);
    // Mid-batch: the first deliveries have landed while most of the 30 are still to go.
    await waitUntil(
      "the first deliveries",
      async () => {
        const counts = await bed.admin.deliveryCount("webpush");
        return subs.filter((s) => (counts.by_target[s.id] ?? 0) > 0).length >= 2;
      },
      10_000,
      50,
    );
    await first.close();
    await bed.admin.clearFaults("webpush");
    const second = await start(senderConfig(), { log });
    try {
      const got = await outcomes(campaignId, 30);
      expect(new Set(got.map((o) => o.deviceId)).size).toBe(30);
      expect(got.every((o) => o.kind === OutcomeKind.DELIVERED)).toBe(true);
      const counts = await bed.admin.deliveryCount("webpush");
      const resent = subs.filter((s) => (counts.by_target[s.id] ?? 0) > 1).length;
      // Only devices of the batch in flight at shutdown can have been sent twice.
      expect(resent).toBeLessThanOrEqual(30);
      expect(subs.every((s) => (counts.by_target[s.id] ?? 0) >= 1)).toBe(true);
    } finally {
      await second.close();
    }
  });
});
