import type { AdminRoute } from "../admin-api.js";
import type { ConnectionRegistry } from "../connections.js";
import { InputError } from "../errors.js";
import { DEVICE_TOKEN, type ApnsDeviceStore, type DeviceState } from "./devices.js";
import type { ApnsKeyStore } from "./keys.js";
import { isTopic } from "./request-headers.js";

/** Enough for a benchmark's audience in one call. */
export const MAX_BULK = 100_000;

const MARKS: Record<string, DeviceState> = {
  unregister: "unregistered",
  expire: "expired",
  bad: "bad",
  revive: "active",
};

/**
 * APNs admin routes: provider keys (what Apple knows of a team), device tokens (what
 * devices registered, and which died), and per-connection stream and token statistics.
 */
export function apnsAdminRoutes(deps: {
  keys: ApnsKeyStore;
  devices: ApnsDeviceStore;
  connections: ConnectionRegistry;
}): AdminRoute[] {
  const { keys, devices, connections } = deps;
  return [
    {
      method: "POST",
      path: /^\/admin\/apns\/keys$/,
      handle: ({ body }) => ({ status: 201, body: keys.register(body) }),
    },
    {
      method: "DELETE",
      path: /^\/admin\/apns\/keys\/([^/]+)$/,
      handle: ({ params }) =>
        keys.revoke(decodeURIComponent(params[0]!))
          ? { status: 204 }
          : { status: 404, body: { error: "NotFound", message: "no such key" } },
    },
    {
      method: "POST",
      path: /^\/admin\/apns\/devices$/,
      handle: ({ body }) => {
        const input = object(body);
        if (!isTopic(input.topic))
          throw new InputError("topic (the app's bundle id, with a push-type suffix if any) is required");
        const count = input.count ?? 1;
        if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_BULK) {
          throw new InputError(`count must be an integer from 1 to ${MAX_BULK}`);
        }
        return { status: 201, body: { tokens: devices.create(input.topic, count) } };
      },
    },
    {
      method: "POST",
      path: /^\/admin\/apns\/devices\/([^/]+)\/(unregister|expire|bad|revive)$/,
      handle: ({ params, body }) => {
        const token = params[0]!;
        if (!DEVICE_TOKEN.test(token)) throw new InputError("a device token is 64 hexadecimal digits");
        const state = MARKS[params[1]!]!;
        const timestamp = object(body).timestamp;
        if (
          timestamp !== undefined &&
          (typeof timestamp !== "number" || !Number.isSafeInteger(timestamp) || timestamp < 0)
        ) {
          throw new InputError("timestamp must be milliseconds since the epoch");
        }
        const since = state === "unregistered" || state === "expired" ? (timestamp ?? Date.now()) : null;
        const device = devices.mark(token, state, since);
        return { status: 200, body: { token: token.toLowerCase(), state: device.state, timestamp: device.since } };
      },
    },
    {
      method: "GET",
      path: /^\/admin\/apns\/connections$/,
      handle: () => {
        const list = connections.list((c) => c.platforms.has("apns"));
        return { status: 200, body: { connections: list, violations: list.reduce((n, c) => n + c.violations, 0) } };
      },
    },
    {
      method: "DELETE",
      path: /^\/admin\/apns\/connections$/,
      handle: () => {
        connections.clearClosed();
        return { status: 204 };
      },
    },
  ];
}

function object(body: unknown): Record<string, unknown> {
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
