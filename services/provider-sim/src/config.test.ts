import { ConfigError, readEnv } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { configSpec, DEFAULT_CERT_DIR } from "./config.js";

describe("configSpec", () => {
  it("defaults to ports 4443/4444, the repo's .herald/sim-ca and a random seed", () => {
    const config = readEnv(configSpec, {});
    expect(config).toMatchObject({ port: 4443, adminPort: 4444, certDir: DEFAULT_CERT_DIR, certHosts: [], publicUrl: undefined, seed: undefined });
    expect(DEFAULT_CERT_DIR).toMatch(/[/\\]\.herald[/\\]sim-ca$/);
  });

  it("reads the simulator's variables", () => {
    const config = readEnv(configSpec, {
      SIM_PUBLIC_URL: "https://provider-sim.herald.svc:4443/",
      SIM_CERT_HOSTS: "provider-sim, provider-sim.herald.svc",
      SIM_SEED: "42",
    });
    expect(config).toMatchObject({
      publicUrl: "https://provider-sim.herald.svc:4443",
      certHosts: ["provider-sim", "provider-sim.herald.svc"],
      seed: 42,
    });
  });

  it("refuses a public URL that is not an https origin, naming every bad variable", () => {
    expect(() => readEnv(configSpec, { SIM_PUBLIC_URL: "https://sim/push", SIM_SEED: "x" })).toThrow(ConfigError);
    expect(() => readEnv(configSpec, { SIM_PUBLIC_URL: "http://sim" })).toThrow(/SIM_PUBLIC_URL/);
  });
});
