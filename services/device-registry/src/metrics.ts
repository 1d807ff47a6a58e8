import { Counter, type Registry } from "prom-client";

export interface DeviceRegistryMetrics {
  registrations: Counter<"result">;
  invalidations: Counter<"source">;
}

export function createDeviceRegistryMetrics(registry: Registry): DeviceRegistryMetrics {
  return {
    registrations: new Counter({
      name: "herald_device_registrations_total",
      help: "RegisterDevice calls that succeeded, by whether they created a device or updated one",
      labelNames: ["result"],
      registers: [registry],
    }),
    invalidations: new Counter({
      name: "herald_device_invalidations_total",
      help: "Devices marked invalid (dead push tokens), by source: the InvalidateDevices RPC or device.invalidated events",
      labelNames: ["source"],
      registers: [registry],
    }),
  };
}
