import { describe, expect, it } from "vitest";
import {
  checkAppVersion,
  checkExternalId,
  fieldChange,
  normaliseLanguage,
  normaliseTags,
  normaliseTimezone,
} from "./device-checks.js";
import { ISO_639_1 } from "@herald/runtime";

describe("language", () => {
  it("knows the 184 ISO 639-1 codes", () => {
    expect(ISO_639_1.size).toBe(184);
    for (const code of ISO_639_1) expect(code).toMatch(/^[a-z]{2}$/);
  });

  it.each([
    ["en", "en"],
    ["EN", "en"],
    ["pt-BR", "pt"],
    ["pt_BR", "pt"],
    ["zh-Hant-TW", "zh"],
  ])("%s → %s", (input, stored) => {
    expect(normaliseLanguage(input)).toBe(stored);
  });

  it.each(["xx", "eng", "e", "en-", "en BR", "123"])("refuses %j", (input) => {
    expect(() => normaliseLanguage(input)).toThrow(/language must be an ISO 639-1 code/);
  });
});

describe("timezone", () => {
  it.each([
    ["Europe/Berlin", "Europe/Berlin"],
    ["america/new_york", "America/New_York"],
    ["UTC", "UTC"],
    ["Asia/Kolkata", "Asia/Kolkata"],
  ])("%s → %s", (input, stored) => {
    expect(normaliseTimezone(input)).toBe(stored);
  });

  it.each(["Mars/Olympus", "+05:00", "Europe/Berlin ", "../etc/passwd", "x".repeat(80)])("refuses %j", (input) => {
    expect(() => normaliseTimezone(input)).toThrow(/timezone must be an IANA time zone name/);
  });
});

describe("external_id and app_version", () => {
  it("bounds their length", () => {
    expect(checkExternalId("u".repeat(255))).toHaveLength(255);
    expect(() => checkExternalId("u".repeat(256))).toThrow(/external_id must be at most 255/);
    expect(checkAppVersion("1.2.3 (45)")).toBe("1.2.3 (45)");
    expect(() => checkAppVersion("1".repeat(65))).toThrow(/app_version must be at most 64/);
    expect(() => checkAppVersion("1.0\n")).toThrow(/app_version/);
  });
});

describe("tags", () => {
  it("deduplicates, keeping first occurrences in order", () => {
    expect(normaliseTags(["vip", "beta", "vip", "de"])).toEqual(["vip", "beta", "de"]);
  });

  it("allows 100 distinct tags of up to 64 characters", () => {
    const tags = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(64, "x"));
    expect(normaliseTags([...tags, tags[0]!])).toHaveLength(100);
  });

  it("refuses too many, empty or overlong tags", () => {
    expect(() => normaliseTags(Array.from({ length: 101 }, (_, i) => `t${i}`))).toThrow(/at most 100/);
    expect(() => normaliseTags([""])).toThrow(/each tag must be 1-64/);
    expect(() => normaliseTags(["x".repeat(65)])).toThrow(/each tag must be 1-64/);
  });
});

describe("fieldChange", () => {
  it("keeps on unset, clears on empty, normalises otherwise", () => {
    expect(fieldChange(undefined, normaliseLanguage)).toBeUndefined();
    expect(fieldChange("", normaliseLanguage)).toBeNull();
    expect(fieldChange("DE-at", normaliseLanguage)).toBe("de");
  });
});
