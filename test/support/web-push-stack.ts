import { type CreatedSubscription, SimAdminClient } from "@herald/provider-sim/admin-client";
import { inject } from "vitest";
import { type Rest, webPushApp } from "./herald-client.js";
import { type Stack, type StackOptions, startStack } from "./stack.js";
import { suiteFixture } from "./suite-fixture.js";

export interface WebPushStack {
  stack: Stack;
  sim: SimAdminClient;
  appId: string;
  /** REST calls with the app's bulk key. */
  api: Rest;
  /** The simulated browsers' subscriptions to the app, not registered yet. */
  subs: CreatedSubscription[];
}

/**
 * The set-up of an end-to-end file that sends to simulated browsers: a whole stack
 * (startStack with `opts`), the simulator's admin client, a web app with VAPID keys and
 * `subscriptions` browsers subscribed to it; stopped after the file's tests (suiteFixture).
 */
export function useWebPushStack(
  opts: StackOptions,
  app: { name: string; bundleId: string; subscriptions: number },
  timeoutMs?: number,
): WebPushStack {
  return suiteFixture(
    async () => {
      const stack = await startStack(inject("infra"), opts);
      try {
        const sim = new SimAdminClient(stack.simAdminUrl);
        const { appId, api, vapidPublicKey } = await webPushApp(stack, app.name, app.bundleId);
        const subs = await sim.createWebPushSubscriptions(vapidPublicKey, app.subscriptions);
        return { stack, sim, appId, api, subs };
      } catch (err) {
        await stack.stop();
        throw err;
      }
    },
    ({ stack }) => stack.stop(),
    timeoutMs,
  );
}
