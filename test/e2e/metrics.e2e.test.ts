import { beforeAll, describe, expect, it } from "vitest";
import { mapLimit, scrapeMetric, waitForCampaign } from "../support/herald-client.js";
import { waitUntil } from "../support/wait.js";
import { useWebPushStack } from "../support/web-push-stack.js";

// The Prometheus metrics an operator scales and alerts on, read from /metrics of the
// real processes as Prometheus would.

const N = 60;
const GONE = 15;
const BATCH = 10;

const w = useWebPushStack(
  { env: { LOG_LEVEL: "info" }, envFor: { campaign: { FANOUT_BATCH_SIZE: String(BATCH) } } },
  { name: "Metered", bundleId: "com.example.metered", subscriptions: N },
);

beforeAll(async () => {
  await mapLimit(w.subs, 8, async (s) => {
    const res = await w.api("POST", "/v1/devices/register", {
      app_id: w.appId,
      platform: "web",
      push_token: JSON.stringify(s.subscription),
    });
    expect(res.status, res.text).toBe(200);
  });
}, 120_000);

describe("metrics", () => {
  it("moves the delivery counters by exactly the campaign's outcomes", async () => {
    for (const s of w.subs.slice(0, GONE)) await w.sim.markWebPushGone(s.id);
    const sender = w.stack.process("sender-webpush").health;
    const outcomes = ["delivered", "bounced", "failed", "throttled"] as const;
    const before = Object.fromEntries(
      await Promise.all(
        outcomes.map(async (o) => [
          o,
          await scrapeMetric(sender, "herald_deliveries_total", { platform: "web", outcome: o }),
        ]),
      ),
    );
    const res = await w.api("POST", "/v1/push/send", {
      app_id: w.appId,
      name: "metered",
      contents: { en: { title: "Hi" } },
    });
    expect(res.status, res.text).toBe(201);
    const done = await waitForCampaign(w.api, res.body.id, ["completed"], 60_000);
    expect(done.stats).toMatchObject({ sent: N, delivered: N - GONE, bounced: GONE, failed: 0, throttled: 0 });
    for (const o of outcomes) {
      const after = await scrapeMetric(sender, "herald_deliveries_total", { platform: "web", outcome: o });
      expect(after - before[o]!, o).toBe(done.stats[o]);
    }
    // The provider latency histogram counted every request, 410s among them.
    expect(
      await scrapeMetric(sender, "herald_provider_request_duration_seconds_count", {
        provider: "webpush",
        status: "4xx",
      }),
    ).toBeGreaterThanOrEqual(GONE);
    expect(
      await scrapeMetric(sender, "herald_provider_request_duration_seconds_count", {
        provider: "webpush",
        status: "2xx",
      }),
    ).toBeGreaterThanOrEqual(N - GONE);
    // Campaigns by status, from the campaign service.
    expect(
      await scrapeMetric(w.stack.process("campaign").health, "herald_campaigns", { status: "completed" }),
    ).toBeGreaterThan(0);
    for (const s of w.subs.slice(0, GONE)) await w.sim.reviveWebPush(s.id);
  });

  it("shows a sender's JetStream backlog rising while it is stopped and falling when it resumes", async () => {
    const campaign = w.stack.process("campaign").health;
    const backlog = () => scrapeMetric(campaign, "herald_sender_backlog_batches", { platform: "web" });
    expect(await backlog()).toBe(0);
    await w.stack.kill("sender-webpush");
    // The devices bounced in the test above are invalid now: re-register them (revival).
    await mapLimit(w.subs.slice(0, GONE), 8, async (s) => {
      await w.api("POST", "/v1/devices/register", {
        app_id: w.appId,
        platform: "web",
        push_token: JSON.stringify(s.subscription),
      });
    });
    const res = await w.api("POST", "/v1/push/send", {
      app_id: w.appId,
      name: "queued",
      contents: { en: { title: "Hi" } },
    });
    expect(res.status, res.text).toBe(201);
    await waitUntil("the backlog to hold every batch", async () => (await backlog()) === N / BATCH);
    await w.stack.restart("sender-webpush");
    await waitUntil("the backlog to drain", async () => (await backlog()) === 0);
    const done = await waitForCampaign(w.api, res.body.id, ["completed"], 60_000);
    expect(done.stats.delivered).toBe(N);
  });
});
