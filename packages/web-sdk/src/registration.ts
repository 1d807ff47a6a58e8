import { request } from "./api.js";
import { type DeviceFields, type StoredState, saveState } from "./store.js";

/** The device as the API answers it (the fields the library reads). */
export interface DeviceJson extends DeviceFields {
  id: string;
  app_id: string;
  push_token: string;
  platform: string;
  invalid: boolean;
}

export const fieldsOf = (d: DeviceJson): DeviceFields => ({
  external_id: d.external_id,
  language: d.language,
  timezone: d.timezone,
  tags: d.tags,
  opted_in: d.opted_in,
});

/** The path of a device call (device ids are UUIDs; encoded anyway). */
export const devicePath = (deviceId: string, rest = "") => `/devices/${encodeURIComponent(deviceId)}${rest}`;

/**
 * Registers a push token with the full desired state (docs/sdk-protocol.md §4 and §6):
 * a new token is a new device, so the user's opt-out is applied to it at once, the
 * previous registration is deleted (with its own token as proof; already gone is fine),
 * and the new one is stored. Shared by the page (subscribe) and the service worker
 * (pushsubscriptionchange). `maxAttempts` bounds retries where time is short.
 */
export async function registerToken(state: StoredState, token: string, maxAttempts?: number): Promise<StoredState> {
  const { config, desired } = state;
  const body: Record<string, unknown> = {
    app_id: config.appId,
    push_token: token,
    platform: "web",
    tags: desired.tags,
  };
  for (const field of ["external_id", "language", "timezone"] as const) {
    if (desired[field] !== null) body[field] = desired[field];
  }
  let device = await request<DeviceJson>(config, "POST", "/devices/register", { body, maxAttempts });
  if (!desired.opted_in && device.opted_in) {
    device = await request<DeviceJson>(config, "POST", devicePath(device.id, "/opt-out"), {
      pushToken: token,
      maxAttempts,
    });
  }
  const next: StoredState = {
    ...state,
    deviceId: device.id,
    pushToken: token,
    confirmed: fieldsOf(device),
    registeredAt: Date.now(),
  };
  await saveState(next);
  if (state.deviceId && state.pushToken && state.deviceId !== device.id) {
    await request(config, "DELETE", devicePath(state.deviceId), { pushToken: state.pushToken, maxAttempts }).catch(
      () => undefined,
    );
  }
  return next;
}
