import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { SimAdminClient, type Delivery } from "@herald/provider-sim/admin-client";
import { apnsPlatformConfig, makeApnsKey, makeServiceAccount } from "../support/credential-fixtures.js";
import { bulkKey, expectConsistentStats, mapLimit, waitForCampaign, type Rest } from "../support/herald-client.js";
import { restClient, startStack, type Stack } from "../support/stack.js";

// One campaign to iOS, Android and web devices at once, each through its own sender to
// the simulated APNs, FCM and Web Push services, with the platform's own payload. The
// service account's token_uri is Google's: dev mode and these tests redirect OAuth to the
// simulator with FCM_TOKEN_URL, as they redirect APNS_URL and FCM_URL.
const CONTENTS = {
  en: { title: "Hello", body: "News" },
  de: { title: "Hallo", body: "Neues" },
  fr: { title: "Bonjour", body: "Nouvelles" },
};
const LANGUAGES = ["en", "de", "fr", "ja", undefined] as const;
const PER_PLATFORM = 30;
const APNS_STREAM_LIMIT = 20;

let stack: Stack;
let boot: Rest;
let api: Rest;
let sim: SimAdminClient;

interface Registered {
  platform: "ios" | "android" | "web";
  target: string;
  language: (typeof LANGUAGES)[number];
}

const expected = (d: Registered) =>
  CONTENTS[(d.language && d.language in CONTENTS ? d.language : "en") as keyof typeof CONTENTS];

async function newApp(bundle: string) {
  const app = await boot("POST", "/v1/apps", { name: bundle, platform: "ios", bundle_id: bundle });
  expect(app.status, app.text).toBe(201);
  return app.body.id as string;
}

async function configure(appId: string, body: Record<string, unknown>) {
  const res = await api("POST", `/v1/apps/${appId}/platform-config`, body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function register(appId: string, devices: Registered[], tokenOf: (d: Registered) => string) {
  await mapLimit(devices, 16, async (d) => {
    const res = await api("POST", "/v1/devices/register", {
      app_id: appId,
      platform: d.platform,
      push_token: tokenOf(d),
      ...(d.language ? { language: d.language } : {}),
    });
    expect(res.status, res.text).toBe(200);
  });
}

beforeAll(async () => {
  stack = await startStack(inject("infra"), {
    env: { LOG_LEVEL: "info" },
    envFor: {
      // A low stream limit, so that the APNs sender's respect for it is visible.
      "provider-sim": { SIM_APNS_MAX_STREAMS: String(APNS_STREAM_LIMIT) },
      "sender-apns": { SENDER_RETRY_BASE_MS: "50", SENDER_RETRY_MAX_ATTEMPTS: "3" },
      "sender-fcm": { SENDER_RETRY_BASE_MS: "50", SENDER_RETRY_MAX_ATTEMPTS: "3" },
    },
  });
  sim = new SimAdminClient(stack.simAdminUrl);
  boot = restClient(stack.gatewayUrls[0]!, stack.apiKey);
  const first = await newApp("com.example.bootstrap");
  api = restClient(stack.gatewayUrls[0]!, await bulkKey(boot, first));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe("a campaign to iOS, Android and web at once", () => {
  it("delivers exactly one correct platform payload per device, and the stats match the simulator", async () => {
    const bundle = "com.example.mixed";
    const appId = await newApp(bundle);
    const apns = makeApnsKey();
    const sa = makeServiceAccount({ projectId: "herald-mixed", tokenUri: "https://oauth2.googleapis.com/token" });
    await sim.registerApnsKey({ team_id: apns.teamId, key_id: apns.keyId, p8: apns.p8, topics: [bundle] });
    await sim.registerFcmServiceAccount({
      project_id: sa.projectId,
      client_email: sa.clientEmail,
      private_key: sa.privateKeyPem,
    });
    await configure(appId, apnsPlatformConfig(apns, bundle, "production"));
    await configure(appId, { platform: "android", fcm_service_account: JSON.parse(sa.json) });
    const web = await configure(appId, { platform: "web", vapid_subject: "mailto:ops@example.com" });

    const iosTokens = await sim.createApnsDevices(bundle, PER_PLATFORM);
    const fcmTokens = await sim.createFcmDevices(sa.projectId, PER_PLATFORM);
    const subs = await sim.createWebPushSubscriptions(web.vapid_public_key, PER_PLATFORM);
    const lang = (i: number) => LANGUAGES[i % LANGUAGES.length];
    const devices: Registered[] = [
      ...iosTokens.map((t, i): Registered => ({ platform: "ios", target: t, language: lang(i) })),
      ...fcmTokens.map((t, i): Registered => ({ platform: "android", target: t, language: lang(i + 1) })),
      ...subs.map((s, i): Registered => ({ platform: "web", target: s.id, language: lang(i + 2) })),
    ];
    const subJson = new Map(subs.map((s) => [s.id, JSON.stringify(s.subscription)]));
    await register(appId, devices, (d) => (d.platform === "web" ? subJson.get(d.target)! : d.target));

    await sim.clearDeliveries();
    const marker = randomUUID();
    const sent = await api("POST", "/v1/push/send", {
      app_id: appId,
      name: "mixed",
      contents: CONTENTS,
      data: { marker, n: 7 },
    });
    expect(sent.status, sent.text).toBe(201);
    const done = await waitForCampaign(api, sent.body.id);
    expect(done.audience_size).toBe(3 * PER_PLATFORM);
    expect(done.stats).toMatchObject({
      sent: 3 * PER_PLATFORM,
      delivered: 3 * PER_PLATFORM,
      failed: 0,
      bounced: 0,
      throttled: 0,
    });
    expectConsistentStats(done);

    const byTarget = new Map<string, Delivery[]>();
    for (const d of await sim.allDeliveries()) byTarget.set(d.target, [...(byTarget.get(d.target) ?? []), d]);
    expect(byTarget.size).toBe(3 * PER_PLATFORM);
    for (const device of devices) {
      const got = byTarget.get(device.target) ?? [];
      expect(got, `${device.platform} ${device.target.slice(0, 8)}`).toHaveLength(1);
      const d = got[0]!;
      const want = expected(device);
      if (d.platform === "apns") {
        const body = JSON.parse(d.payload);
        expect(body.aps.alert).toEqual(want);
        expect(body).toMatchObject({ marker, n: 7, herald_campaign_id: done.id });
        expect(d).toMatchObject({ topic: bundle, push_type: "alert", priority: 10 });
      } else if (d.platform === "fcm") {
        expect(d.project).toBe(sa.projectId);
        expect(d.message.notification).toEqual(want);
        expect(d.message.data).toEqual({ marker, n: "7", herald_campaign_id: done.id });
      } else {
        expect(JSON.parse(d.payload)).toEqual({ campaign_id: done.id, ...want, data: { marker, n: 7 } });
      }
    }
    // Stats match the simulator's record exactly.
    expect((await sim.deliveryCount()).total).toBe(done.stats.delivered);
  });

  it("fails devices whose credentials are wrong, with the campaign still completing", async () => {
    const bundle = "com.example.wrongcreds";
    const appId = await newApp(bundle);
    const forged = makeApnsKey(); // never registered with Apple (the simulator)
    const sa = makeServiceAccount({ projectId: "herald-revoked" });
    await sim.registerFcmServiceAccount({
      project_id: sa.projectId,
      client_email: sa.clientEmail,
      private_key: sa.privateKeyPem,
    });
    await sim.revokeFcmServiceAccount(sa.clientEmail);
    await configure(appId, apnsPlatformConfig(forged, bundle));
    await configure(appId, { platform: "android", fcm_service_account: sa.json });
    const ios = (await sim.createApnsDevices(bundle, 5)).map(
      (t): Registered => ({ platform: "ios", target: t, language: "en" }),
    );
    const android = (await sim.createFcmDevices(sa.projectId, 5)).map(
      (t): Registered => ({ platform: "android", target: t, language: "de" }),
    );
    await register(appId, [...ios, ...android], (d) => d.target);

    const sent = await api("POST", "/v1/push/send", { app_id: appId, name: "doomed", contents: CONTENTS });
    expect(sent.status, sent.text).toBe(201);
    const done = await waitForCampaign(api, sent.body.id);
    expect(done.stats).toMatchObject({ sent: 10, failed: 10, delivered: 0 });
    expectConsistentStats(done);
    const logs = stack.logs();
    expect(logs).not.toContain(forged.p8.split("\n")[1]);
    expect(logs).not.toContain(sa.privateKeyPem.split("\n")[1]);
  });

  it("keeps every APNs connection within the streams the server allows while sending 1,000 pushes", async () => {
    const bundle = "com.example.streams";
    const appId = await newApp(bundle);
    const apns = makeApnsKey();
    await sim.registerApnsKey({ team_id: apns.teamId, key_id: apns.keyId, p8: apns.p8, topics: [bundle] });
    await configure(appId, apnsPlatformConfig(apns, bundle));
    const tokens = await sim.createApnsDevices(bundle, 1000);
    await register(
      appId,
      tokens.map((t): Registered => ({ platform: "ios", target: t, language: "en" })),
      (d) => d.target,
    );
    await sim.clearApnsConnections();

    const sent = await api("POST", "/v1/push/send", { app_id: appId, name: "many", contents: CONTENTS });
    expect(sent.status, sent.text).toBe(201);
    const done = await waitForCampaign(api, sent.body.id);
    expect(done.stats).toMatchObject({ sent: 1000, delivered: 1000 });

    const { connections, violations } = await sim.apnsConnections();
    const apnsConnections = connections.filter((c) => c.platforms.includes("apns"));
    expect(apnsConnections.length).toBeGreaterThan(0);
    expect(violations).toBe(0);
    for (const c of apnsConnections) {
      expect(c.violations).toBe(0);
      expect(c.max_concurrent_streams).toBeLessThanOrEqual(APNS_STREAM_LIMIT);
    }
    // Multiplexed, not one request at a time.
    expect(Math.max(...apnsConnections.map((c) => c.max_concurrent_streams))).toBeGreaterThan(1);
  });
});
