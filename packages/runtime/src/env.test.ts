import { describe, expect, it } from "vitest";
import { ConfigError, httpsUrl, readEnv } from "./env.js";

describe("httpsUrl", () => {
  const read = (form: "origin" | "base", value: string) => readEnv({ u: httpsUrl("U", form) }, { U: value }).u;

  it.each([
    ["origin", "https://127.0.0.1:4443", "https://127.0.0.1:4443"],
    ["origin", "https://sim.example/", "https://sim.example"],
    ["base", "https://fcm.googleapis.com/", "https://fcm.googleapis.com"],
    ["base", "https://proxy.example/fcm//", "https://proxy.example/fcm"],
  ] as const)("reads a %s from %s", (form, value, expected) => {
    expect(read(form, value)).toBe(expected);
  });

  it.each([
    ["origin", "not a url", /U: must be a URL/],
    ["origin", "http://127.0.0.1:4443", /U: must be an https: URL/],
    ["origin", "https://127.0.0.1:4443/3/device", /U: must be an origin/],
    ["base", "http://fcm.example", /U: must be an https: URL/],
    ["base", "https://fcm.example/?key=1", /U: must not have a query or fragment/],
  ] as const)("refuses a %s of %s", (form, value, message) => {
    expect(() => read(form, value)).toThrow(ConfigError);
    expect(() => read(form, value)).toThrow(message);
  });
});
