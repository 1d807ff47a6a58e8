import type { Logger } from "@herald/runtime/service";
import type { AdminRoute } from "../admin-api.js";
import type { Config } from "../config.js";
import type { ConnectionRegistry } from "../connections.js";
import type { ProviderHandler } from "../platform.js";
import type { Recorder } from "../recorder.js";
import { apnsAdminRoutes } from "./admin-routes.js";
import { ApnsService } from "./apns-service.js";
import { ApnsDeviceStore, DeviceRateLimiter } from "./devices.js";
import { ApnsKeyStore } from "./keys.js";
import { ProviderTokenVerifier } from "./provider-token.js";

/** The APNs provider and its admin routes, wired from the simulator's config. */
export function setUpApns(
  config: Config,
  deps: { recorder: Recorder; connections: ConnectionRegistry; log: Logger },
): { handlers: ProviderHandler[]; routes: AdminRoute[] } {
  const keys = new ApnsKeyStore();
  const devices = new ApnsDeviceStore();
  const service = new ApnsService({
    keys,
    verifier: new ProviderTokenVerifier(keys),
    devices,
    limiter: new DeviceRateLimiter(config.apnsDeviceBurst, config.apnsDeviceRatePerS),
    recorder: deps.recorder,
    log: deps.log,
    minTokenIntervalMs: config.apnsMinTokenIntervalMs,
    strictTokens: config.apnsStrictTokens,
  });
  return { handlers: [service], routes: apnsAdminRoutes({ keys, devices, connections: deps.connections }) };
}
