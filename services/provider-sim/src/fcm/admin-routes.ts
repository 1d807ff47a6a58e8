import type { AdminRoute } from "../admin-api.js";
import { InputError } from "../errors.js";
import type { FcmDeviceStore } from "./devices.js";
import type { ServiceAccountStore } from "./service-accounts.js";

/** Enough for a benchmark's audience in one call. */
export const MAX_BULK = 100_000;
const TOKEN = /^[A-Za-z0-9_:-]{1,4096}$/;

/**
 * FCM admin routes: service accounts (what Google knows of a project's credentials;
 * each lists how many access tokens it was issued, so tests can check token caching)
 * and registration tokens.
 */
export function fcmAdminRoutes(deps: { accounts: ServiceAccountStore; devices: FcmDeviceStore }): AdminRoute[] {
  const { accounts, devices } = deps;
  const mark =
    (unregistered: boolean): AdminRoute["handle"] =>
    ({ params }) => {
      const token = decodeURIComponent(params[0]!);
      if (!TOKEN.test(token)) throw new InputError("a registration token is 1-4096 characters of A-Z a-z 0-9 _ : -");
      devices.mark(token, unregistered);
      return { status: 200, body: { token, unregistered } };
    };
  return [
    {
      method: "POST",
      path: /^\/admin\/fcm\/service-accounts$/,
      handle: ({ body }) => ({ status: 201, body: accounts.register(body) }),
    },
    {
      method: "GET",
      path: /^\/admin\/fcm\/service-accounts$/,
      handle: () => {
        const list = accounts.list();
        return {
          status: 200,
          body: { service_accounts: list, tokens_issued: list.reduce((n, a) => n + a.tokens_issued, 0) },
        };
      },
    },
    {
      method: "DELETE",
      path: /^\/admin\/fcm\/service-accounts\/([^/]+)$/,
      handle: ({ params }) =>
        accounts.revoke(decodeURIComponent(params[0]!))
          ? { status: 204 }
          : { status: 404, body: { error: "NotFound", message: "no such service account" } },
    },
    {
      method: "POST",
      path: /^\/admin\/fcm\/devices$/,
      handle: ({ body }) => {
        const input = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
        if (typeof input.project_id !== "string" || input.project_id.length === 0)
          throw new InputError("project_id is required");
        const count = input.count ?? 1;
        if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_BULK) {
          throw new InputError(`count must be an integer from 1 to ${MAX_BULK}`);
        }
        return { status: 201, body: { tokens: devices.create(input.project_id, count) } };
      },
    },
    { method: "POST", path: /^\/admin\/fcm\/devices\/([^/]+)\/unregister$/, handle: mark(true) },
    { method: "POST", path: /^\/admin\/fcm\/devices\/([^/]+)\/revive$/, handle: mark(false) },
  ];
}
