import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Platform } from "@herald/proto/common";
import { OutcomeKind } from "@herald/proto/delivery";
import { createLogger } from "@herald/runtime";
import { start } from "../src/server.js";
import { FcmTestBed, log, type Outcomes, type Target, type TestApp } from "./harness.js";

// The FCM sender end to end below the gateway: real credential service holding a real
// service-account file, real JetStream and Redis, the strict simulator as FCM and as the
// account's OAuth token endpoint.
const bed = new FcmTestBed();
beforeAll(() => bed.setUp());
afterAll(() => bed.tearDown());

const kinds = (got: Outcomes) => got.map((o) => OutcomeKind[o.kind]);

/** Sends `targets` as one campaign in batches of 100 (several in flight at once) and waits for every outcome. */
async function campaign(app: TestApp, targets: Target[]): Promise<Outcomes> {
  const campaignId = randomUUID();
  for (let b = 0; b * 100 < targets.length; b++)
    await bed.publishBatch(app, targets.slice(b * 100, (b + 1) * 100), { campaignId, seq: BigInt(b + 1) });
  return bed.outcomes(campaignId, targets.length);
}

describe("fcm sender", () => {
  it("delivers 1,000 messages with one OAuth token and the mapped message", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const targets = await bed.targets(app, 1_000);
      const campaignId = randomUUID();
      const dataJson = JSON.stringify({ action_url: "https://example.com/a", count: 3, flag: true, extra: { a: [1] } });
      for (let b = 0; b < 4; b++) {
        await bed.publishBatch(app, targets.slice(b * 250, (b + 1) * 250), {
          campaignId,
          seq: BigInt(b + 1),
          dataJson,
        });
      }
      const got = await bed.outcomes(campaignId, 1_000);
      expect(got).toHaveLength(1_000);
      expect(new Set(got.map((o) => o.deviceId))).toEqual(new Set(targets.map((t) => t.id)));
      expect(got.every((o) => o.kind === OutcomeKind.DELIVERED && o.attempts === 1)).toBe(true);
      expect(await bed.tokensIssued(app.clientEmail)).toBe(1);

      const deliveries = await bed.admin.allDeliveries({ platform: "fcm" });
      const byToken = new Map(deliveries.filter((d) => d.project === app.projectId).map((d) => [d.target, d]));
      expect(byToken.size).toBe(1_000);
      for (const [i, t] of targets.entries()) {
        const english = (i % 250) % 2 === 1;
        const message = byToken.get(t.token)!.message;
        const ttl = (message.android as { ttl: string }).ttl;
        expect(message).toEqual({
          token: t.token,
          notification: {
            title: english ? "Hello" : "Hallo",
            body: english ? "How are you?" : "Wie geht's?",
            image: "https://example.com/i.png",
          },
          data: {
            action_url: "https://example.com/a",
            count: "3",
            flag: "true",
            extra: '{"a":[1]}',
            herald_campaign_id: campaignId,
          },
          android: { priority: "high", ttl, collapse_key: "news" },
        });
        // What is left of the campaign's 3600 s when the message went out.
        expect(ttl).toMatch(/^\d+s$/);
        expect(Number(ttl.slice(0, -1))).toBeGreaterThan(3_500);
      }
    } finally {
      await sender.close();
    }
  });

  it("puts sound, channel and badge count in android.notification, and sends a silent send data-only", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const [styled, counted, silent] = [
        await bed.targets(app, 1),
        await bed.targets(app, 1),
        await bed.targets(app, 1),
      ];
      const ids = [
        await bed.publishBatch(app, styled, { notification: { sound: "chime", androidChannelId: "news", badge: 4 } }),
        await bed.publishBatch(app, counted, { notification: { badgeIncrement: 2 } }),
        await bed.publishBatch(app, silent, { notification: { contentAvailable: true } }),
      ];
      for (const id of ids) expect((await bed.outcomes(id, 1)).map((o) => o.kind)).toEqual([OutcomeKind.DELIVERED]);
      const deliveries = await bed.admin.allDeliveries({ platform: "fcm" });
      const of = (t: { token: string }) => deliveries.find((d) => d.target === t.token)!.message;
      expect(of(styled[0]!).android).toMatchObject({
        notification: { sound: "chime", channel_id: "news", notification_count: 4 },
      });
      expect(of(counted[0]!).data).toMatchObject({ herald_badge_increment: "2" });
      expect((of(counted[0]!).android as Record<string, unknown>).notification).toBeUndefined();
      const quiet = of(silent[0]!);
      expect(quiet.notification).toBeUndefined();
      expect(quiet.data).toEqual({ action_url: "https://example.com/a", herald_campaign_id: ids[2] });
      expect((quiet.android as Record<string, unknown>).notification).toBeUndefined();
    } finally {
      await sender.close();
    }
  });

  it("bounces unregistered tokens and publishes device.invalidated for them", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const targets = await bed.targets(app, 6);
      await bed.admin.unregisterFcmDevice(targets[0]!.token);
      await bed.admin.unregisterFcmDevice(targets[1]!.token);
      const got = await bed.outcomes(await bed.publishBatch(app, targets), 6);
      const bounced = got.filter((o) => o.kind === OutcomeKind.BOUNCED);
      expect(bounced.map((o) => o.deviceId).sort()).toEqual([targets[0]!.id, targets[1]!.id].sort());
      expect(bounced.every((o) => o.reason === "UNREGISTERED")).toBe(true);
      expect(got.filter((o) => o.kind === OutcomeKind.DELIVERED)).toHaveLength(4);

      const events = await bed.invalidationsOf(app.appId);
      expect(events.map((e) => e.deviceId).sort()).toEqual(bounced.map((o) => o.deviceId).sort());
      for (const e of events) expect(e).toMatchObject({ platform: Platform.ANDROID, reason: "UNREGISTERED" });
    } finally {
      await sender.close();
    }
  });

  it("waits out QUOTA_EXCEEDED's Retry-After, then delivers; ends throttled when it persists", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const targets = await bed.targets(app, 10);
      await bed.admin.setFaults("fcm", { throttle_rate: 1, retry_after_s: 1, remaining: 3 });
      const t0 = Date.now();
      let got = await bed.outcomes(await bed.publishBatch(app, targets), 10);
      expect(kinds(got)).toEqual(Array(10).fill("DELIVERED"));
      expect(got.some((o) => o.attempts > 1)).toBe(true);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);

      await bed.admin.setFaults("fcm", { throttle_rate: 1, retry_after_s: 0 });
      got = await bed.outcomes(await bed.publishBatch(app, targets), 10);
      expect(got.map((o) => [OutcomeKind[o.kind], o.reason, o.attempts])).toEqual(
        Array(10).fill(["THROTTLED", "QUOTA_EXCEEDED", 4]),
      );
    } finally {
      await bed.admin.clearFaults("fcm");
      await sender.close();
    }
  });

  it("retries 503 and 500 with backoff, and fails when they persist", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const targets = await bed.targets(app, 10);
      await bed.admin.setFaults("fcm", { error_rate: 1, error_status: 503, remaining: 6 });
      let got = await bed.outcomes(await bed.publishBatch(app, targets), 10);
      expect(kinds(got)).toEqual(Array(10).fill("DELIVERED"));
      expect(got.some((o) => o.attempts > 1)).toBe(true);

      await bed.admin.setFaults("fcm", { error_rate: 1, error_status: 500 });
      got = await bed.outcomes(await bed.publishBatch(app, targets), 10);
      expect(got.map((o) => [OutcomeKind[o.kind], o.reason])).toEqual(Array(10).fill(["FAILED", "INTERNAL"]));
    } finally {
      await bed.admin.clearFaults("fcm");
      await sender.close();
    }
  });

  it("fails every device of a revoked service account with a readable reason", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const targets = await bed.targets(app, 20);
      let got = await bed.outcomes(await bed.publishBatch(app, targets.slice(0, 5)), 5);
      expect(kinds(got)).toEqual(Array(5).fill("DELIVERED"));

      // The sender holds a token that now stops working, and no new one can be had.
      await bed.admin.revokeFcmServiceAccount(app.clientEmail);
      got = await bed.outcomes(await bed.publishBatch(app, targets), 20);
      expect(got).toHaveLength(20);
      expect(new Set(got.map((o) => o.deviceId)).size).toBe(20);
      for (const o of got) {
        expect(OutcomeKind[o.kind]).toBe("FAILED");
        expect(o.reason).toMatch(/^OAuthRejected: invalid_grant/);
      }
    } finally {
      await sender.close();
    }
  });

  it("fails data with reserved keys and payloads over 4096 bytes without sending", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig(), { log });
    try {
      const targets = await bed.targets(app, 2);
      const reserved = await bed.outcomes(
        await bed.publishBatch(app, targets, { dataJson: JSON.stringify({ "google.c.a": "x" }) }),
        2,
      );
      expect(reserved.map((o) => [OutcomeKind[o.kind], o.reason])).toEqual(
        Array(2).fill(["FAILED", "ReservedDataKey: google.c.a"]),
      );
      const big = await bed.outcomes(
        await bed.publishBatch(app, targets, { dataJson: JSON.stringify({ x: "y".repeat(4096) }) }),
        2,
      );
      expect(big.map((o) => [OutcomeKind[o.kind], o.reason])).toEqual(Array(2).fill(["FAILED", "PayloadTooLarge"]));
      const counts = await bed.admin.deliveryCount("fcm");
      expect(targets.every((t) => counts.by_target[t.token] === undefined)).toBe(true);
    } finally {
      await sender.close();
    }
  });

  it("loses nothing to GOAWAYs and dropped streams mid-batch: every device one outcome, delivered once", async () => {
    const app = await bed.newApp();
    const lines: string[] = [];
    const sender = await start(bed.senderConfig(), {
      log: createLogger("sender-fcm", "info", { write: (line: string) => void lines.push(line) }),
    });
    try {
      // GOAWAY alone: the streams FCM never processed are re-sent by the pool on a new
      // connection, so no device needs a second attempt and none is delivered twice.
      let targets = await bed.targets(app, 400);
      await bed.admin.setFaults("fcm", { goaway_rate: 0.03 });
      let got = await campaign(app, targets);
      expect(got).toHaveLength(400);
      expect(new Set(got.map((o) => o.deviceId))).toEqual(new Set(targets.map((t) => t.id)));
      expect(got.map((o) => [OutcomeKind[o.kind], o.attempts])).toEqual(Array(400).fill(["DELIVERED", 1]));
      let counts = await bed.admin.deliveryCount("fcm");
      for (const t of targets) expect(counts.by_target[t.token]).toBe(1);
      expect(lines.filter((l) => l.includes("FCM connection going away")).length).toBeGreaterThan(1);

      // GOAWAYs and streams cut after FCM took them (those are retried as new attempts).
      targets = await bed.targets(app, 400);
      await bed.admin.setFaults("fcm", { goaway_rate: 0.02, drop_rate: 0.05 });
      got = await campaign(app, targets);
      expect(got).toHaveLength(400);
      expect(new Set(got.map((o) => o.deviceId)).size).toBe(400);
      expect(kinds(got)).toEqual(Array(400).fill("DELIVERED"));
      expect(got.some((o) => o.attempts > 1)).toBe(true);
      counts = await bed.admin.deliveryCount("fcm");
      for (const t of targets) expect(counts.by_target[t.token]).toBe(1);

      // Neither registration tokens nor access tokens reached a log line on the way.
      const logged = lines.join("");
      for (const t of targets) expect(logged).not.toContain(t.token);
      expect(logged).not.toMatch(/ya29\.|bearer /i);
    } finally {
      await bed.admin.clearFaults("fcm");
      await sender.close();
    }
  }, 60_000);

  it("shares the rate ceiling between two senders: no window gets more than its budget", async () => {
    const app = await bed.newApp();
    // 600/min in 1 s windows: 10 sends per window for the app, across both senders.
    const cfg = { FCM_RATE_LIMIT_PER_MINUTE: "600", FCM_RATE_WINDOW_MS: "1000", SENDER_CONCURRENT_BATCHES: "1" };
    const senders = [await start(bed.senderConfig(cfg), { log }), await start(bed.senderConfig(cfg), { log })];
    const { redis } = bed;
    try {
      const targets = await bed.targets(app, 60);
      // The window counters expire soon after their window: sample them while the senders work.
      const windows = new Map<string, number>();
      const sample = async () => {
        for (const k of await redis.keys(`${bed.redisPrefix}fcm:rate:{${app.appId}}:*`)) {
          windows.set(k, Math.max(windows.get(k) ?? 0, Number(await redis.get(k))));
        }
      };
      const sampling = setInterval(() => void sample(), 100);
      const campaignId = randomUUID();
      const t0 = Date.now();
      let got: Outcomes;
      try {
        for (let b = 0; b < 6; b++)
          await bed.publishBatch(app, targets.slice(b * 10, (b + 1) * 10), { campaignId, seq: BigInt(b + 1) });
        got = await bed.outcomes(campaignId, 60, 60_000);
      } finally {
        clearInterval(sampling);
      }
      await sample();
      const elapsed = Date.now() - t0;
      expect(kinds(got)).toEqual(Array(60).fill("DELIVERED"));
      // 60 sends need six windows: at least four whole ones pass between the first and the last.
      expect(elapsed).toBeGreaterThanOrEqual(4_000);
      const counts = [...windows.values()];
      expect(counts.length).toBeGreaterThanOrEqual(6);
      expect(Math.max(...counts)).toBeLessThanOrEqual(10);

      // Both senders took part, and every attempt took one slot of a window: 60 sends,
      // plus any retry a slow moment caused (a retry is a request FCM counts too). A slot can
      // also go unused: one reserved just before its window ended is lost with the window
      // (rate-ceiling.ts), at most one chunk (here 1) per replica and window.
      let attempts = 0;
      for (const s of senders) {
        const metrics = await (await fetch(`http://127.0.0.1:${s.adminPort}/metrics`)).text();
        expect(metrics).toMatch(/herald_sender_attempts_total\{[^}]*result="delivered"[^}]*\} [1-9]/);
        for (const m of metrics.matchAll(/^herald_sender_attempts_total\{[^}]*\} (\d+)$/gm)) attempts += Number(m[1]);
      }
      expect(attempts).toBeGreaterThanOrEqual(60);
      const slots = counts.reduce((a, b) => a + b, 0);
      expect(slots).toBeGreaterThanOrEqual(attempts);
      expect(slots - attempts).toBeLessThanOrEqual(senders.length * counts.length);
    } finally {
      await Promise.all(senders.map((s) => s.close()));
    }
  }, 90_000);

  it("keeps sending when Redis is unreachable, with the ceiling per replica", async () => {
    const app = await bed.newApp();
    const sender = await start(bed.senderConfig({ REDIS_URL: "redis://127.0.0.1:1" }), { log });
    try {
      const got = await bed.outcomes(await bed.publishBatch(app, await bed.targets(app, 5)), 5);
      expect(kinds(got)).toEqual(Array(5).fill("DELIVERED"));
    } finally {
      await sender.close();
    }
  });
});
