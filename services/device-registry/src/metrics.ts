import { Counter, type Registry } from "prom-client";

export interface DeviceRegistryMetrics {
  registrations: Counter<"result">;
}

export function createDeviceRegistryMetrics(registry: Registry): DeviceRegistryMetrics {
  return {
    registrations: new Counter({
      name: "herald_device_registrations_total",
      help: "RegisterDevice calls that succeeded, by whether they created a device or updated one",
      labelNames: ["result"],
      registers: [registry],
    }),
  };
}
