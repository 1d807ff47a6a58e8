import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { SimAdminClient, type CreatedSubscription } from "@herald/provider-sim/admin-client";
import { expectConsistentStats, mapLimit, type Rest, waitForCampaign, webPushApp } from "../support/herald-client.js";
import { startStack, type Stack } from "../support/stack.js";
import { eventually, poll } from "../support/wait.js";

// The delivery pipeline through the REST API only: gateway → campaign service → fan-out
// over JetStream → web push sender → the strict simulator, which decrypts every payload.
const N = 2000;
const CONTENTS = {
  en: { title: "Hello", body: "News for you" },
  de: { title: "Hallo", body: "Neuigkeiten für dich" },
  fr: { title: "Bonjour", body: "Des nouvelles pour vous" },
  es: { title: "Hola", body: "Noticias para ti" },
};
const LANGUAGES = ["en", "de", "fr", "es", "it", undefined] as const; // "it" and none fall back to en

interface TestDevice {
  i: number;
  id: string;
  sub: CreatedSubscription;
  language: (typeof LANGUAGES)[number];
  optedOut: boolean;
  externalId?: string;
  vip: boolean;
}

let stack: Stack;
let api: Rest;
let sim: SimAdminClient;
let appId: string;
let devices: TestDevice[];

const expectedContent = (d: TestDevice) =>
  CONTENTS[(d.language && d.language in CONTENTS ? d.language : "en") as keyof typeof CONTENTS];

/** Deliveries the simulator accepted for one campaign (marked through data.marker), by subscription. */
type WebPayload = { campaign_id: string; title: string; body: string; data: any };

async function deliveriesOf(marker: string): Promise<Map<string, WebPayload[]>> {
  const all = await sim.allDeliveries({ platform: "webpush" });
  const out = new Map<string, WebPayload[]>();
  for (const d of all) {
    const payload = JSON.parse(d.payload);
    if (payload.data?.marker !== marker) continue;
    const list = out.get(d.subscription_id!) ?? [];
    list.push(payload);
    out.set(d.subscription_id!, list);
  }
  return out;
}

async function send(path: string, extra: Record<string, unknown>, marker = randomUUID()) {
  const res = await api("POST", path, {
    app_id: appId,
    name: `campaign ${marker}`,
    contents: CONTENTS,
    data: { marker, action_url: "https://example.com/x" },
    ...extra,
  });
  expect(res.status, res.text).toBe(201);
  return { campaign: res.body, marker };
}

/** Exactly one correct payload for every targeted device, none for the rest. */
async function expectDelivered(marker: string, targeted: TestDevice[]) {
  const got = await deliveriesOf(marker);
  const targetedSubs = new Set(targeted.map((d) => d.sub.id));
  const campaignIds = new Set<string>();
  for (const d of targeted) {
    const payloads = got.get(d.sub.id) ?? [];
    expect(payloads, `device ${d.i}`).toHaveLength(1);
    const { campaign_id, ...rest } = payloads[0]!;
    campaignIds.add(campaign_id);
    expect(rest).toEqual({ ...expectedContent(d), data: { marker, action_url: "https://example.com/x" } });
  }
  // One send, one campaign: the id the service worker reports its events with.
  expect(campaignIds.size).toBe(targeted.length === 0 ? 0 : 1);
  for (const sub of got.keys()) expect(targetedSubs.has(sub), `untargeted subscription ${sub} got a push`).toBe(true);
}

beforeAll(async () => {
  stack = await startStack(inject("infra"), {
    env: { LOG_LEVEL: "info" },
    envFor: {
      "sender-webpush": {
        SENDER_RETRY_BASE_MS: "50",
        SENDER_RETRY_MAX_DELAY_MS: "200",
        SENDER_RETRY_MAX_ATTEMPTS: "4",
      },
      campaign: { SCHEDULER_INTERVAL_MS: "200" },
    },
  });
  sim = new SimAdminClient(stack.simAdminUrl);
  let vapidPublicKey: string;
  ({ appId, api, vapidPublicKey } = await webPushApp(stack, "Web app", "com.example.webapp"));

  const subs = await sim.createWebPushSubscriptions(vapidPublicKey, N);
  devices = await mapLimit(subs, 32, async (sub, i) => {
    const d: Omit<TestDevice, "id"> = {
      i,
      sub,
      language: LANGUAGES[i % LANGUAGES.length],
      optedOut: i % 10 === 0,
      externalId: i % 3 === 0 ? `user-${i}` : undefined,
      vip: i % 5 === 1,
    };
    const res = await api("POST", "/v1/devices/register", {
      app_id: appId,
      push_token: JSON.stringify(sub.subscription),
      platform: "web",
      ...(d.language ? { language: d.language } : {}),
      ...(d.externalId ? { external_id: d.externalId } : {}),
      ...(d.vip ? { tags: ["vip"] } : {}),
    });
    expect(res.status, res.text).toBe(200);
    if (d.optedOut) expect((await api("POST", `/v1/devices/${res.body.id}/opt-out`)).status).toBe(200);
    return { ...d, id: res.body.id };
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

describe("sending", () => {
  it("sends to all opted-in devices, each exactly once in its language", async () => {
    const { campaign, marker } = await send("/v1/push/send", {});
    expect(["queued", "sending", "completed"]).toContain(campaign.status);
    const done = await waitForCampaign(api, campaign.id);
    const targeted = devices.filter((d) => !d.optedOut);
    expect(done.audience_size).toBe(targeted.length);
    expect(done.stats).toMatchObject({
      campaign_id: campaign.id,
      sent: targeted.length,
      delivered: targeted.length,
      failed: 0,
      bounced: 0,
      throttled: 0,
    });
    expect(done.sent_at).not.toBeNull();
    expectConsistentStats(done);
    await expectDelivered(marker, targeted);
    const stats = await api("GET", `/v1/campaigns/${campaign.id}/stats`);
    expect(stats.body).toEqual(done.stats);
  });

  it("sends to the caller's own user ids", async () => {
    const chosen = devices.filter((d) => d.externalId).slice(0, 300);
    const ids = [...chosen.map((d) => d.externalId!), "nobody-has-this-id"];
    const { campaign, marker } = await send("/v1/push/send-to-users", { external_ids: ids });
    const done = await waitForCampaign(api, campaign.id);
    const targeted = chosen.filter((d) => !d.optedOut);
    expect(done.audience_size).toBe(targeted.length);
    expectConsistentStats(done);
    await expectDelivered(marker, targeted);
  });

  it("sends to a segment", async () => {
    const seg = await api("POST", "/v1/segments", {
      app_id: appId,
      name: "VIP German and French",
      rule: { tags_any: ["vip"], languages: ["de", "fr"] },
    });
    expect(seg.status, seg.text).toBe(201);
    const targeted = devices.filter((d) => d.vip && (d.language === "de" || d.language === "fr") && !d.optedOut);
    expect(seg.body.preview_count).toBe(targeted.length);
    const { campaign, marker } = await send("/v1/push/send-to-segment", { segment_id: seg.body.id });
    const done = await waitForCampaign(api, campaign.id);
    expect(done.audience_size).toBe(targeted.length);
    expectConsistentStats(done);
    await expectDelivered(marker, targeted);
  });

  it("pages the campaign list with 50 per page by default, like every list", async () => {
    const list = await api("GET", `/v1/campaigns?app_id=${appId}`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 50 });
    expect(list.body.total).toBeGreaterThanOrEqual(3);
  });
});

describe("scheduling and cancelling", () => {
  it("keeps a scheduled campaign until its time, then delivers it", async () => {
    const at = new Date(Date.now() + 4000).toISOString();
    const { campaign, marker } = await send("/v1/push/send-to-users", {
      external_ids: ["user-3", "user-6"],
      scheduled_at: at,
    });
    expect(campaign.status).toBe("scheduled");
    expect(campaign.scheduled_at).toBe(at);
    // Watched until shortly before it is due (time the test spends waiting anyway): it stays scheduled.
    const early = await poll(
      async () => (await api("GET", `/v1/campaigns/${campaign.id}`)).body.status,
      (status) => status !== "scheduled" || Date.now() > Date.parse(at) - 500,
      5_000,
      250,
    );
    expect(early.value).toBe("scheduled");
    const done = await waitForCampaign(api, campaign.id);
    expect(Date.parse(done.sent_at)).toBeGreaterThanOrEqual(Date.parse(at));
    await expectDelivered(
      marker,
      devices.filter((d) => d.externalId === "user-3" || d.externalId === "user-6").filter((d) => !d.optedOut),
    );
  });

  it("cancels a scheduled campaign, which then delivers nothing", async () => {
    const at = Date.now() + 2000;
    const { campaign, marker } = await send("/v1/push/send", { scheduled_at: new Date(at).toISOString() });
    const cancelled = await api("POST", `/v1/campaigns/${campaign.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    // Nothing happening has no event of its own: a sentinel due just after it shows the
    // scheduler went past its time (it promotes due campaigns in scheduled_at order).
    const sentinel = await send("/v1/push/send-to-users", {
      external_ids: ["user-3"],
      scheduled_at: new Date(at + 1).toISOString(),
    });
    await waitForCampaign(api, sentinel.campaign.id);
    expect((await api("GET", `/v1/campaigns/${campaign.id}`)).body.status).toBe("cancelled");
    expect((await deliveriesOf(marker)).size).toBe(0);
  });

  it("refuses to cancel once delivery has started, with 409 CampaignNotCancellable", async () => {
    const { campaign } = await send("/v1/push/send", {});
    await waitForCampaign(api, campaign.id, ["sending", "completed"]);
    const res = await api("POST", `/v1/campaigns/${campaign.id}/cancel`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: "CampaignNotCancellable", message: expect.any(String) });
    await waitForCampaign(api, campaign.id);
  });
});

describe("dead subscriptions", () => {
  it("bounces gone subscriptions, marks their devices invalid, skips them next time, and revives them on re-registration", async () => {
    const chosen = devices.filter((d) => d.externalId && !d.optedOut).slice(0, 40);
    const gone = chosen.slice(0, 10);
    for (const d of gone) await sim.markWebPushGone(d.sub.id);
    const ids = chosen.map((d) => d.externalId!);

    const first = await send("/v1/push/send-to-users", { external_ids: ids });
    const done = await waitForCampaign(api, first.campaign.id);
    expect(done.stats).toMatchObject({ sent: 40, delivered: 30, bounced: 10, failed: 0, throttled: 0 });
    for (const d of gone) {
      const invalid = await eventually(async () => (await api("GET", `/v1/devices/${d.id}`)).body.invalid, 5_000);
      expect(invalid, `device ${d.i} marked invalid`).toBe(true);
    }

    const second = await send("/v1/push/send-to-users", { external_ids: ids });
    const done2 = await waitForCampaign(api, second.campaign.id);
    expect(done2.audience_size).toBe(30);
    expect(done2.stats.delivered).toBe(30);

    for (const d of gone) {
      await sim.reviveWebPush(d.sub.id);
      const again = await api("POST", "/v1/devices/register", {
        app_id: appId,
        push_token: JSON.stringify(d.sub.subscription),
        platform: "web",
      });
      expect(again.body).toMatchObject({ id: d.id, invalid: false });
    }
    const third = await send("/v1/push/send-to-users", { external_ids: ids });
    expect((await waitForCampaign(api, third.campaign.id)).stats).toMatchObject({ sent: 40, delivered: 40 });
  });
});

describe("provider faults", () => {
  it("retries 5xx, 429 and latency until delivered; the stats still add up", async () => {
    await sim.setFaults("webpush", {
      error_rate: 0.2,
      error_status: 503,
      throttle_rate: 0.1,
      retry_after_s: 0,
      latency_ms: 20,
    });
    try {
      const chosen = devices.filter((d) => d.externalId && !d.optedOut).slice(0, 150);
      const { campaign, marker } = await send("/v1/push/send-to-users", {
        external_ids: chosen.map((d) => d.externalId!),
      });
      const done = await waitForCampaign(api, campaign.id);
      expectConsistentStats(done);
      expect(done.stats.sent).toBe(150);
      // With 4 attempts at ~30% fault rate a few may exhaust; whatever did, is counted.
      expect(done.stats.delivered + done.stats.failed + done.stats.throttled).toBe(150);
      expect(done.stats.delivered).toBeGreaterThan(140);
      const got = await deliveriesOf(marker);
      expect([...got.values()].every((p) => p.length === 1)).toBe(true);
      expect(got.size).toBe(done.stats.delivered);
    } finally {
      await sim.clearFaults("webpush");
    }
  });

  it("counts exhausted retries as throttled or failed, never losing a device", async () => {
    const chosen = devices.filter((d) => d.externalId && !d.optedOut).slice(0, 20);
    const ids = chosen.map((d) => d.externalId!);
    await sim.setFaults("webpush", { throttle_rate: 1, retry_after_s: 0 });
    try {
      const throttled = await waitForCampaign(
        api,
        (await send("/v1/push/send-to-users", { external_ids: ids })).campaign.id,
      );
      expect(throttled.stats).toMatchObject({ sent: 20, throttled: 20, delivered: 0 });
    } finally {
      await sim.clearFaults("webpush");
    }
    await sim.setFaults("webpush", { error_rate: 1, error_status: 500 });
    try {
      const failed = await waitForCampaign(
        api,
        (await send("/v1/push/send-to-users", { external_ids: ids })).campaign.id,
      );
      expect(failed.stats).toMatchObject({ sent: 20, failed: 20, delivered: 0 });
    } finally {
      await sim.clearFaults("webpush");
    }
  });
});

describe("bad send bodies", () => {
  const base = () => ({ app_id: appId, name: "bad", contents: CONTENTS });
  const expectError = (res: { status: number; body: any }, status: number, name: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body).toMatchObject({ error: name, message: expect.any(String) });
  };

  it("answers each with the right status and the seed's error body", async () => {
    expectError(
      await api("POST", "/v1/push/send", { ...base(), contents: { de: CONTENTS.de } }),
      422,
      "UnprocessableEntity",
    );
    expectError(
      await api("POST", "/v1/push/send", { ...base(), contents: { ...CONTENTS, english: CONTENTS.en } }),
      400,
      "ValidationError",
    );
    expectError(
      await api("POST", "/v1/push/send", { ...base(), scheduled_at: new Date(Date.now() - 3_600_000).toISOString() }),
      422,
      "UnprocessableEntity",
    );
    expectError(await api("POST", "/v1/push/send", { ...base(), app_id: "not-a-uuid" }), 400, "ValidationError");
    expectError(
      await api("POST", "/v1/push/send-to-segment", { ...base(), segment_id: "nope" }),
      400,
      "ValidationError",
    );
    expectError(
      await api("POST", "/v1/push/send-to-segment", { ...base(), segment_id: randomUUID() }),
      404,
      "NotFound",
    );
    expectError(await api("POST", "/v1/push/send-to-users", { ...base(), external_ids: [] }), 400, "ValidationError");
    expectError(
      await api("POST", "/v1/push/send-to-users", {
        ...base(),
        external_ids: Array.from({ length: 10_001 }, (_, i) => `u${i}`),
      }),
      400,
      "ValidationError",
    );
    expectError(
      await api("POST", "/v1/push/send", { ...base(), data: { blob: "x".repeat(5000) } }),
      400,
      "ValidationError",
    );
    expectError(
      await api("POST", "/v1/push/send", { ...base(), data: { aps: { alert: "x" } } }),
      400,
      "ValidationError",
    );
    expectError(await api("POST", "/v1/push/send", { ...base(), name: undefined }), 400, "ValidationError");
    expectError(await api("GET", `/v1/campaigns/${randomUUID()}`), 404, "NotFound");
  });
});
