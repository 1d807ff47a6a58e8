import { ConfigError, readEnv } from "@herald/runtime/service";
import { describe, expect, it } from "vitest";
import { configSpec, DEFAULT_CERT_DIR } from "./config.js";

describe("configSpec", () => {
  it("defaults to ports 4443/4444, the repo's .herald/sim-ca and a random seed", () => {
    const config = readEnv(configSpec, {});
    expect(config).toMatchObject({
      port: 4443,
      adminPort: 4444,
      certDir: DEFAULT_CERT_DIR,
      certHosts: [],
      publicUrl: undefined,
      seed: undefined,
    });
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

  it("reads the APNs and FCM settings, with Apple's and Google's values as defaults", () => {
    expect(readEnv(configSpec, {})).toMatchObject({
      apnsMaxStreams: 500,
      apnsMinTokenIntervalMs: 1_200_000,
      apnsStrictTokens: false,
      fcmTokenTtlS: 3599,
      fcmStrictTokens: false,
    });
    expect(
      readEnv(configSpec, {
        SIM_APNS_MAX_STREAMS: "50",
        SIM_APNS_MIN_TOKEN_INTERVAL_MS: "100",
        SIM_APNS_STRICT_TOKENS: "1",
        SIM_APNS_DEVICE_BURST: "3",
        SIM_APNS_DEVICE_RATE_PER_S: "0",
        SIM_FCM_TOKEN_TTL_S: "2",
        SIM_FCM_STRICT_TOKENS: "true",
      }),
    ).toMatchObject({
      apnsMaxStreams: 50,
      apnsMinTokenIntervalMs: 100,
      apnsStrictTokens: true,
      apnsDeviceBurst: 3,
      apnsDeviceRatePerS: 0,
      fcmTokenTtlS: 2,
      fcmStrictTokens: true,
    });
    expect(() => readEnv(configSpec, { SIM_APNS_MAX_STREAMS: "0" })).toThrow(/SIM_APNS_MAX_STREAMS/);
  });

  it("refuses a public URL that is not an https origin, naming every bad variable", () => {
    expect(() => readEnv(configSpec, { SIM_PUBLIC_URL: "https://sim/push", SIM_SEED: "x" })).toThrow(ConfigError);
    expect(() => readEnv(configSpec, { SIM_PUBLIC_URL: "http://sim" })).toThrow(/SIM_PUBLIC_URL/);
  });
});
