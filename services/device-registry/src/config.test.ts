import { readEnv } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { configSpec } from "./config.js";

describe("configSpec", () => {
  it("has production defaults", () => {
    expect(readEnv(configSpec, {})).toMatchObject({
      port: 7001,
      adminPort: 7101,
      schema: "device_registry",
      webPushAllowPrivate: false,
      webPushAllowedHosts: undefined,
    });
  });

  it("reads the web push guard settings", () => {
    const config = readEnv(configSpec, {
      HERALD_WEBPUSH_ALLOW_PRIVATE: "1",
      HERALD_WEBPUSH_ALLOWED_HOSTS: " fcm.googleapis.com, .Notify.Windows.com ,,",
    });
    expect(config.webPushAllowPrivate).toBe(true);
    expect(config.webPushAllowedHosts).toEqual(["fcm.googleapis.com", ".notify.windows.com"]);
  });

  it("reports every bad variable at once", () => {
    expect(() => readEnv(configSpec, { PORT: "x", HERALD_WEBPUSH_ALLOW_PRIVATE: "maybe" })).toThrow(
      /PORT.*HERALD_WEBPUSH_ALLOW_PRIVATE/,
    );
  });
});
