import type { Device } from "@herald/proto/device";
import type { FastifyRequest } from "fastify";
import type { AppDirectory } from "./app-directory.js";
import type { DeviceClient } from "./backends.js";
import { isClientKey, presentedPushToken, PUSH_TOKEN_MISMATCH } from "./client-key-policy.js";
import { possessesDevice } from "./device-possession.js";
import { perRequest } from "./early-authorization.js";
import { forbidden } from "./http-errors.js";
import { principalOf } from "./plugins/auth.js";

/**
 * The device a `/v1/devices/{id}…` route names, if the caller may touch its app: 404 when
 * unknown, 403 when not theirs. A client key must also present the device's push token
 * (the "device-proof" access of client-key-policy.ts); a wrong one gets the same 403
 * whichever app the device is in, so nothing says where a device lives.
 */
export function authorizedDevice(
  deps: { devices: DeviceClient; apps: AppDirectory },
  request: FastifyRequest,
  id: string,
): Promise<Device> {
  // Once per request: the early check (early-authorization.ts) and the handler share it.
  return perRequest(request, `device:${id}`, () => lookUp(deps, request, id));
}

async function lookUp(
  deps: { devices: DeviceClient; apps: AppDirectory },
  request: FastifyRequest,
  id: string,
): Promise<Device> {
  const { device } = await deps.devices.getDevice({ id });
  if (!device) throw new Error("GetDevice answered without a device");
  const principal = principalOf(request);
  if (isClientKey(principal) && !possessesDevice(device, presentedPushToken(request.headers) ?? "")) {
    throw forbidden(PUSH_TOKEN_MISMATCH);
  }
  await deps.apps.authorized(principal, device.appId);
  return device;
}
