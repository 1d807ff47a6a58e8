import type { AdminRoute } from "../admin-api.js";
import { InputError } from "../errors.js";
import type { SubscriptionStore } from "./subscriptions.js";

/** Enough for a benchmark's audience in one call, small enough to answer in a few seconds. */
export const MAX_BULK = 100_000;

/** Web Push admin routes: subscribe like a browser does, and mark subscriptions gone or alive. */
export function webPushAdminRoutes(store: SubscriptionStore): AdminRoute[] {
  const setGone =
    (gone: boolean): AdminRoute["handle"] =>
    ({ params }) => {
      const id = params[0]!;
      if (!store.setGone(id, gone))
        return { status: 404, body: { error: "NotFound", message: "no such subscription" } };
      return { status: 200, body: { id, gone } };
    };
  return [
    {
      method: "POST",
      path: /^\/admin\/webpush\/subscriptions$/,
      handle: async ({ body }) => {
        const input = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
        const key = input.application_server_key;
        if (typeof key !== "string")
          throw new InputError("application_server_key (the app's VAPID public key, base64url) is required");
        const count = input.count ?? 1;
        if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_BULK) {
          throw new InputError(`count must be an integer from 1 to ${MAX_BULK}`);
        }
        return { status: 201, body: { subscriptions: await store.create(key, count) } };
      },
    },
    { method: "POST", path: /^\/admin\/webpush\/subscriptions\/([^/]+)\/gone$/, handle: setGone(true) },
    { method: "DELETE", path: /^\/admin\/webpush\/subscriptions\/([^/]+)\/gone$/, handle: setGone(false) },
  ];
}
