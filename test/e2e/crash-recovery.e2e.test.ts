import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { expectConsistentStats, waitForCampaign } from "../support/herald-client.js";
import { waitUntil } from "../support/wait.js";
import { seedRegistryDevices } from "../support/registry-seed.js";
import { useWebPushStack } from "../support/web-push-stack.js";

// kill -9 in the middle of a 20,000-device campaign: of the web push sender, then of
// the campaign service during fan-out. Nothing accepted may be lost; every device ends
// with exactly one outcome.
const N = 20_000;
const BATCH = 100;

const w = useWebPushStack(
  {
    env: { LOG_LEVEL: "info" },
    envFor: {
      // One batch in flight, so "at most one in-flight batch" is a sharp bound; a short
      // ack wait so the killed sender's batch comes back quickly.
      "sender-webpush": { SENDER_CONCURRENT_BATCHES: "1", SENDER_MAX_IN_FLIGHT: "64", SENDER_ACK_WAIT_MS: "5000" },
      campaign: { FANOUT_BATCH_SIZE: String(BATCH), FANOUT_LEASE_MS: "3000", FANOUT_PAGE_SIZE: "100" },
    },
  },
  { name: "Big", bundleId: "com.example.big", subscriptions: N },
  300_000,
);

beforeAll(async () => {
  await seedRegistryDevices(
    inject("infra").databaseUrl,
    w.stack.schemas["device-registry"]!,
    w.appId,
    w.subs.map((s) => ({ platform: "web", token: JSON.stringify(s.subscription) })),
  );
}, 300_000);

// Before the stack stops (after-hooks run last-registered first).
afterAll(async () => {
  if ("sim" in w) await w.sim.clearFaults("webpush").catch(() => undefined);
});

async function deliveriesPerSubscription(): Promise<Map<string, number>> {
  const counts = await w.sim.deliveryCount("webpush");
  return new Map(Object.entries(counts.by_target));
}

it("survives kill -9 of the web push sender mid-campaign", async () => {
  await w.sim.clearDeliveries();
  await w.sim.setFaults("webpush", { latency_ms: 5 });
  const res = await w.api("POST", "/v1/push/send", {
    app_id: w.appId,
    name: "big one",
    contents: { en: { title: "Hi", body: "all" } },
  });
  expect(res.status, res.text).toBe(201);
  await waitUntil("a quarter delivered", async () => (await w.sim.deliveryCount("webpush")).total >= N / 4);
  await w.stack.kill("sender-webpush");
  const atKill = (await w.sim.deliveryCount("webpush")).total;
  await w.sim.clearFaults("webpush");
  await w.stack.restart("sender-webpush");

  const done = await waitForCampaign(w.api, res.body.id, ["completed"], 240_000);
  expect(done.audience_size).toBe(N);
  expect(done.stats).toMatchObject({ sent: N, delivered: N, failed: 0, bounced: 0, throttled: 0 });
  expectConsistentStats(done);

  const perSub = await deliveriesPerSubscription();
  const missing = w.subs.filter((s) => !perSub.get(s.id)).length;
  const duplicates = [...perSub.values()].filter((n) => n > 1).length;
  console.log(
    `sender kill -9 after ${atKill} deliveries: ${duplicates} devices got a duplicate (bound: one batch = ${BATCH})`,
  );
  expect(missing).toBe(0);
  expect(duplicates).toBeLessThanOrEqual(BATCH);
}, 300_000);

it("survives kill -9 of the campaign service mid-fan-out", async () => {
  await w.sim.clearDeliveries();
  // Small batches and pages make the fan-out of 20,000 devices last long enough to be cut.
  const res = await w.api("POST", "/v1/push/send", {
    app_id: w.appId,
    name: "fan-out crash",
    contents: { en: { title: "Hi", body: "again" } },
  });
  expect(res.status, res.text).toBe(201);
  await waitUntil(
    "fan-out started",
    async () => (await w.api("GET", `/v1/campaigns/${res.body.id}`)).body.status === "sending",
    30_000,
  );
  await w.stack.kill("campaign"); // resolves once the process has exited: nothing more to wait for
  await w.stack.restart("campaign");

  const done = await waitForCampaign(w.api, res.body.id, ["completed"], 240_000);
  expect(done.audience_size).toBe(N);
  expect(done.stats).toMatchObject({ sent: N, delivered: N });
  expectConsistentStats(done);
  const perSub = await deliveriesPerSubscription();
  expect(w.subs.filter((s) => !perSub.get(s.id)).length).toBe(0);
  const duplicates = [...perSub.values()].filter((n) => n > 1).length;
  console.log(`campaign kill -9 mid-fan-out: ${duplicates} devices got a duplicate`);
  expect(duplicates).toBe(0);
}, 300_000);
