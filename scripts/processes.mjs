// The processes that make up a running Herald, in start order: used by dev mode and by
// the end-to-end tests, so both run exactly the same commands.
export const PROCESSES = [
  { name: "credential", entry: "services/credential/src/main.ts", port: 7003, health: 7103 },
  { name: "device-registry", entry: "services/device-registry/src/main.ts", port: 7001, health: 7101 },
  { name: "gateway", entry: "gateway/src/main.ts", port: 8080, health: 8080 },
];
