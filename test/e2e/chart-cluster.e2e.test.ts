import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SimAdminClient, type CreatedSubscription } from "@herald/provider-sim/admin-client";
import { type ChartCluster, startChartCluster } from "../support/chart-cluster.js";
import { bulkKey, expectAllDelivered, scrapeMetric, waitForCampaign, type Rest } from "../support/herald-client.js";
import { createMixedApp } from "../support/mixed-app.js";
import { restClient } from "../support/stack.js";

// The chart proven by running it: every Deployment of the rendered chart started as the
// image would start it (command, args, env from the rendered Secrets and ConfigMaps,
// probes) from the production build with production dependencies only; see
// test/support/chart-cluster.ts for what stands in for the cluster.

let cluster: ChartCluster | undefined;

afterAll(async () => {
  await cluster?.stop();
});

async function configureWebApp(api: Rest, name: string) {
  const app = await api("POST", "/v1/apps", { name, platform: "web", bundle_id: `com.example.${name}` });
  expect(app.status, app.text).toBe(201);
  const key = await bulkKey(api, app.body.id);
  const scoped = restClient(cluster!.gatewayUrl(), key);
  const config = await scoped("POST", `/v1/apps/${app.body.id}/platform-config`, {
    platform: "web",
    vapid_subject: "mailto:ops@example.com",
  });
  expect(config.status, config.text).toBe(200);
  return { appId: app.body.id as string, key, vapidKey: config.body.vapid_public_key as string };
}

describe("the chart with its default values", () => {
  it("starts every component from the rendered manifests, ready on its probes, and delivers a campaign to iOS, Android and web", async () => {
    cluster = await startChartCluster(inject("infra"));
    const roles = cluster.pods.map((p) => p.role).sort();
    expect(roles).toEqual(
      [
        "campaign",
        "credential",
        "device-registry",
        "gateway",
        "sender-apns",
        "sender-fcm",
        "sender-webpush",
        "webhooks",
      ].sort(),
    );
    for (const pod of cluster.pods) {
      expect(await cluster.probe(pod, "livenessProbe"), pod.name).toBe(200);
      expect(await cluster.probe(pod, "readinessProbe"), pod.name).toBe(200);
      expect(await cluster.probe(pod, "startupProbe"), pod.name).toBe(200);
    }

    const sim = new SimAdminClient(cluster.simAdminUrl);
    // The first API key comes from the rendered Secret, as NOTES.txt tells a user to read it.
    const { appId, api, apns } = await createMixedApp({
      gatewayUrl: cluster.gatewayUrl(),
      bootKey: cluster.apiKey,
      sim,
      bundle: "com.example.chart",
      perPlatform: 5,
    });

    await sim.clearDeliveries();
    const send = await api("POST", "/v1/push/send", {
      app_id: appId,
      name: "from the chart",
      contents: { en: { title: "Installed", body: "with helm" } },
    });
    expect(send.status, send.text).toBe(201);
    const done = await waitForCampaign(api, send.body.id, ["completed"], 60_000);
    expectAllDelivered(done, 15);
    for (const platform of ["apns", "fcm", "webpush"] as const) {
      expect((await sim.deliveryCount(platform)).total, platform).toBe(5);
    }

    // No process logged a secret: the keys from the rendered Secret, the p8, the service account key.
    const logs = cluster.logs();
    expect(logs).not.toContain(cluster.apiKey);
    expect(logs).not.toContain(apns.p8.split("\n")[1]!);
    await cluster.stop();
    cluster = undefined;
  }, 600_000);
});

// ---------------------------------------------------------------------------------------

const N = 20_000;
const BATCH = 100;

/** Devices straight into the registry's table: 20,000 REST calls would only measure the test. */
async function seedWebDevices(databaseUrl: string, appId: string, subs: CreatedSubscription[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tokens = subs.map((s) => JSON.stringify(s.subscription));
    for (let i = 0; i < tokens.length; i += 5000) {
      const chunk = tokens.slice(i, i + 5000);
      await client.query(
        `INSERT INTO device_registry.devices (app_id, push_token, token_hash, platform, language)
         SELECT $1, t, h, 'web', 'en' FROM unnest($2::text[], $3::bytea[]) AS x(t, h)`,
        [appId, chunk, chunk.map((t) => createHash("sha256").update(t).digest())],
      );
    }
  } finally {
    await client.end();
  }
}

describe("the chart scaled out: 3 web push senders, 2 campaign services", () => {
  it("delivers 20,000 devices with exact stats, every replica doing part of the work; then survives a rolling update of every pod mid-campaign", async () => {
    cluster = await startChartCluster(inject("infra"), {
      values: () => ({
        components: {
          campaign: { replicas: 2, config: { fanoutBatchSize: BATCH, fanoutPageSize: 500, fanoutLeaseMs: 5000 } },
          // A small send window per replica, so that a campaign lasts long enough for a
          // rolling update to happen during it.
          senderWebpush: { replicas: 3, config: { maxInFlight: 8, concurrentBatches: 2, ackWaitMs: 10000 } },
        },
      }),
    });
    const c = cluster;
    expect(c.podsOf("sender-webpush")).toHaveLength(3);
    expect(c.podsOf("campaign")).toHaveLength(2);
    const sim = new SimAdminClient(c.simAdminUrl);
    const boot = restClient(c.gatewayUrl(), c.apiKey);
    const { appId, key, vapidKey } = await configureWebApp(boot, "scaled");
    // The gateway pod may change during the rolling update: resolve it per request.
    const api: Rest = (method, path, body, headers) => restClient(c.gatewayUrl(), key)(method, path, body, headers);
    const subs = await sim.createWebPushSubscriptions(vapidKey, N);
    await seedWebDevices(c.databaseUrl, appId, subs);

    const adminPort = (pod: (typeof c.pods)[number]) => (pod.namedPorts.get("admin") ?? pod.namedPorts.get("http"))!;

    // 1. Scaled out: exact stats, and every replica did part of the work.
    await sim.clearDeliveries();
    const first = await api("POST", "/v1/push/send", {
      app_id: appId,
      name: "scaled",
      contents: { en: { title: "Hi", body: "all" } },
    });
    expect(first.status, first.text).toBe(201);
    const firstDone = await waitForCampaign(api, first.body.id, ["completed"], 300_000);
    expectAllDelivered(firstDone, N);
    const sends = await Promise.all(
      c.podsOf("sender-webpush").map((p) => scrapeMetric(adminPort(p), "herald_sender_attempts_total")),
    );
    const outcomes = await Promise.all(
      c.podsOf("campaign").map((p) => scrapeMetric(adminPort(p), "herald_outcomes_recorded_total")),
    );
    console.log(
      `20,000 devices over 3 senders: ${sends.join(" / ")} sends; 2 campaign replicas: ${outcomes.join(" / ")} outcomes`,
    );
    for (const n of sends) expect(n).toBeGreaterThan(0);
    for (const n of outcomes) expect(n).toBeGreaterThan(0);
    // The release carries the native key agreement addon (scripts/native-build.mjs, stage-release.mjs).
    const nativeAgreement = await Promise.all(
      c
        .podsOf("sender-webpush")
        .map((p) => scrapeMetric(adminPort(p), "herald_webpush_key_agreement", { implementation: "native" })),
    );
    expect(nativeAgreement).toEqual([1, 1, 1]);
    expect(sends.reduce((a, b) => a + b, 0)).toBe(N);
    expect(outcomes.reduce((a, b) => a + b, 0)).toBe(N);

    // 2. A rolling update of every pod during the next campaign: for each pod in turn, a new
    // one starts and is ready (maxSurge 1, maxUnavailable 0), then the old one gets SIGTERM.
    await sim.clearDeliveries();
    await sim.setFaults("webpush", { latency_ms: 20 });
    const second = await api("POST", "/v1/push/send", {
      app_id: appId,
      name: "rolling",
      contents: { en: { title: "Hi", body: "again" } },
    });
    expect(second.status, second.text).toBe(201);
    const order = [
      "credential",
      "device-registry",
      "campaign",
      "sender-webpush",
      "sender-apns",
      "sender-fcm",
      "gateway",
    ];
    let restartedSenders = 0;
    const exitCodes: Record<string, number | null> = {};
    for (const role of order) {
      for (const old of c.podsOf(role)) {
        await c.surge(old.deployment);
        exitCodes[old.name] = await c.terminate(old);
        if (role === "sender-webpush") restartedSenders++;
      }
    }
    const midway = (await sim.deliveryCount("webpush")).total;
    await sim.clearFaults("webpush");
    const secondDone = await waitForCampaign(api, second.body.id, ["completed"], 300_000);
    expectAllDelivered(secondDone, N);
    const perSub = new Map(Object.entries((await sim.deliveryCount("webpush")).by_target));
    const missing = subs.filter((s) => !perSub.get(s.id)).length;
    const duplicates = [...perSub.values()].filter((n) => n > 1).length;
    console.log(
      `rolling update of ${Object.keys(exitCodes).length} pods (${restartedSenders} web push senders) while ` +
        `${midway} of ${N} were delivered: ${missing} missing, ${duplicates} duplicates ` +
        `(bound: one in-flight batch of ${BATCH} per restarted sender = ${restartedSenders * BATCH})`,
    );
    expect(midway).toBeLessThan(N); // the update really happened during the campaign
    expect(Object.values(exitCodes).every((code) => code === 0)).toBe(true); // every process drained and exited cleanly
    expect(missing).toBe(0);
    expect(duplicates).toBeLessThanOrEqual(restartedSenders * BATCH);
  }, 900_000);
});
