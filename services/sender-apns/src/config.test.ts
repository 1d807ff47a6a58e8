import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("config", () => {
  it("defaults to Apple's hosts (no APNS_URL) and the admin port 7011", () => {
    const c = loadConfig({});
    expect(c.apnsUrl).toBeUndefined();
    expect(c.adminPort).toBe(7011);
    expect(c.tokenRefreshMinutes).toBe(50);
  });

  it("takes APNS_URL as an https origin only", () => {
    expect(loadConfig({ APNS_URL: "https://127.0.0.1:4443" }).apnsUrl).toBe("https://127.0.0.1:4443");
    expect(() => loadConfig({ APNS_URL: "http://127.0.0.1:4443" })).toThrow(/APNS_URL: must be an https/);
    expect(() => loadConfig({ APNS_URL: "https://127.0.0.1:4443/3/device" })).toThrow(/APNS_URL: must be an origin/);
    expect(() => loadConfig({ APNS_TOKEN_REFRESH_MINUTES: "10" })).toThrow(/APNS_TOKEN_REFRESH_MINUTES/);
  });
});
