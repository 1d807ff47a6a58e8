import { expect } from "vitest";
import type { CreatedSubscription, SimAdminClient } from "@herald/provider-sim/admin-client";
import { apnsPlatformConfig, makeApnsKey, makeServiceAccount } from "./credential-fixtures.js";
import { bulkKey, mapLimit, type Rest } from "./herald-client.js";
import { restClient } from "./stack.js";

/** An app with all three platforms configured, and a client for it. */
export interface ConfiguredApp {
  appId: string;
  /** An org key without the default rate limit. */
  key: string;
  api: Rest;
  apns: ReturnType<typeof makeApnsKey>;
  serviceAccount: ReturnType<typeof makeServiceAccount>;
  vapidPublicKey: string;
}

/** A configured app with devices of each platform registered. */
export interface MixedApp extends ConfiguredApp {
  ios: string[];
  android: string[];
  web: CreatedSubscription[];
}

/**
 * An app with all three platforms configured: an APNs key and an FCM service account the
 * simulator knows, and a generated VAPID pair. Google's token_uri stays in the service
 * account: the stack redirects OAuth to the simulator with FCM_TOKEN_URL.
 */
export async function configureMixedApp(opts: {
  gatewayUrl: string;
  bootKey: string;
  sim: SimAdminClient;
  bundle: string;
  name?: string;
}): Promise<ConfiguredApp> {
  const { sim, bundle } = opts;
  const boot = restClient(opts.gatewayUrl, opts.bootKey);
  const app = await boot("POST", "/v1/apps", { name: opts.name ?? bundle, platform: "ios", bundle_id: bundle });
  expect(app.status, app.text).toBe(201);
  const appId = app.body.id as string;
  const key = await bulkKey(boot, appId);
  const api = restClient(opts.gatewayUrl, key);
  const apns = makeApnsKey();
  const serviceAccount = makeServiceAccount({ tokenUri: "https://oauth2.googleapis.com/token" });
  await sim.registerApnsKey({ team_id: apns.teamId, key_id: apns.keyId, p8: apns.p8, topics: [bundle] });
  await sim.registerFcmServiceAccount({
    project_id: serviceAccount.projectId,
    client_email: serviceAccount.clientEmail,
    private_key: serviceAccount.privateKeyPem,
  });
  const configure = async (body: Record<string, unknown>) => {
    const res = await api("POST", `/v1/apps/${appId}/platform-config`, body);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  await configure(apnsPlatformConfig(apns, bundle, "production"));
  await configure({ platform: "android", fcm_service_account: JSON.parse(serviceAccount.json) });
  const vapid = await configure({ platform: "web", vapid_subject: "mailto:ops@example.com" });
  return { appId, key, api, apns, serviceAccount, vapidPublicKey: vapid.vapid_public_key };
}

/**
 * An app with all three platforms configured (configureMixedApp) and `perPlatform`
 * devices of each registered through the REST API.
 */
export async function createMixedApp(opts: {
  gatewayUrl: string;
  bootKey: string;
  sim: SimAdminClient;
  bundle: string;
  perPlatform: number;
}): Promise<MixedApp> {
  const { sim, bundle, perPlatform } = opts;
  const app = await configureMixedApp(opts);
  const { appId, api, serviceAccount, vapidPublicKey } = app;
  const ios = await sim.createApnsDevices(bundle, perPlatform);
  const android = await sim.createFcmDevices(serviceAccount.projectId, perPlatform);
  const web = await sim.createWebPushSubscriptions(vapidPublicKey, perPlatform);
  const devices = [
    ...ios.map((t) => ({ platform: "ios", push_token: t })),
    ...android.map((t) => ({ platform: "android", push_token: t })),
    ...web.map((s) => ({ platform: "web", push_token: JSON.stringify(s.subscription) })),
  ];
  await mapLimit(devices, 8, async (d) => {
    const res = await api("POST", "/v1/devices/register", { app_id: appId, ...d });
    expect(res.status, res.text).toBe(200);
  });
  return { ...app, ios, android, web };
}
