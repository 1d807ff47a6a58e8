import type { SimAdminClient, SubscriptionJson } from "@herald/provider-sim/admin-client";
import type { Rest } from "../herald-client.js";
import { configureMixedApp } from "../mixed-app.js";
import { seedRegistryDevices } from "../registry-seed.js";
import type { Stack } from "../stack.js";

/** The simulator's names of the three push services. */
export type SimPlatform = "apns" | "fcm" | "webpush";
export const SIM_PLATFORMS: readonly SimPlatform[] = ["apns", "fcm", "webpush"];

export interface ChaosFleet {
  appId: string;
  /** A client with an org key without the default rate limit. */
  api: Rest;
  /** Devices in all. */
  devices: number;
  /** Every device's simulator target (APNs token, FCM token, subscription id), per platform. */
  targets: Record<SimPlatform, string[]>;
}

/**
 * One app with iOS, Android and web configured against the simulator, and `devices`
 * devices over the three. The devices go straight into the registry's table, in their canonical
 * form (services/device-registry/src/push-token.ts): 50,000 REST registrations would
 * only measure the set-up.
 */
export async function createChaosFleet(opts: {
  stack: Stack;
  sim: SimAdminClient;
  databaseUrl: string;
  /** Split as evenly as it goes over iOS, Android and web. */
  devices: number;
}): Promise<ChaosFleet> {
  const { stack, sim, devices } = opts;
  const share = (i: number) => Math.floor(devices / 3) + (i < devices % 3 ? 1 : 0);
  const bundle = "com.example.chaos";
  const { appId, api, serviceAccount, vapidPublicKey } = await configureMixedApp({
    gatewayUrl: stack.gatewayUrls[0]!,
    bootKey: stack.apiKey,
    sim,
    bundle,
    name: "Chaos",
  });

  const ios = await sim.createApnsDevices(bundle, share(0));
  const android = await sim.createFcmDevices(serviceAccount.projectId, share(1));
  const web = await sim.createWebPushSubscriptions(vapidPublicKey, share(2));
  await seedRegistryDevices(opts.databaseUrl, stack.schemas["device-registry"]!, appId, [
    ...ios.map((t) => ({ platform: "ios", token: t.toLowerCase() })),
    ...android.map((t) => ({ platform: "android", token: t })),
    ...web.map((s) => ({ platform: "web", token: canonicalSubscription(s.subscription) })),
  ]);
  return { appId, api, devices, targets: { apns: ios, fcm: android, webpush: web.map((s) => s.id) } };
}

/** The registry's canonical web token: the endpoint and both keys, in a fixed order. */
function canonicalSubscription(sub: SubscriptionJson): string {
  const b64 = (v: string) => Buffer.from(v, "base64url").toString("base64url");
  return JSON.stringify({
    endpoint: new URL(sub.endpoint).href,
    keys: { p256dh: b64(sub.keys.p256dh), auth: b64(sub.keys.auth) },
  });
}
