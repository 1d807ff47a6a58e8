import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { SegmentRuleSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { segmentCriteria, segmentName, storedSegmentRule } from "./segment-rule.js";

const rule = (init: MessageInitShape<typeof SegmentRuleSchema>) => create(SegmentRuleSchema, init);
const many = (n: number, make: (i: number) => string = (i) => `v${i}`) => Array.from({ length: n }, (_, i) => make(i));

function invalidArgument(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    const e = ConnectError.from(err);
    expect(e.code).toBe(Code.InvalidArgument);
    return e.rawMessage;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("storedSegmentRule", () => {
  it("normalises like the device fields: distinct values, ISO 639-1 codes, canonical time zones", () => {
    expect(
      storedSegmentRule(
        rule({
          tagsAny: ["vip", "vip", "beta"],
          platforms: [Platform.WEB, Platform.WEB],
          languages: ["PT-br", "pt", "en_US"],
          appVersions: ["1.0", "1.0"],
          timezones: ["europe/berlin", "Asia/Kolkata"],
          hasExternalId: true,
        }),
      ),
    ).toEqual({
      tagsAny: ["vip", "beta"],
      tagsAll: [],
      tagsNone: [],
      platforms: ["web"],
      languages: ["pt", "en"],
      appVersions: ["1.0"],
      timezones: ["Europe/Berlin", "Asia/Kolkata"],
      hasExternalId: true,
    });
  });

  it("counts has_external_id = false as a condition", () => {
    expect(storedSegmentRule(rule({ hasExternalId: false })).hasExternalId).toBe(false);
  });

  it.each<[string, MessageInitShape<typeof SegmentRuleSchema> | undefined, RegExp]>([
    ["missing rule", undefined, /^rule is required$/],
    ["empty rule", {}, /^rule must set at least one condition$/],
    ["empty lists only", { tagsAny: [], platforms: [] }, /^rule must set at least one condition$/],
    ["too many tags_any", { tagsAny: many(101) }, /^rule.tags_any must hold at most 100 distinct tags$/],
    ["too many tags_all", { tagsAll: many(101) }, /^rule.tags_all must hold at most 100/],
    ["too many tags_none", { tagsNone: many(101) }, /^rule.tags_none must hold at most 100/],
    ["empty tag", { tagsAny: [""] }, /^rule.tags_any: each tag must be 1-64 characters/],
    ["long tag", { tagsAll: ["x".repeat(65)] }, /^rule.tags_all: each tag must be 1-64 characters/],
    ["control character in tag", { tagsNone: ["a\nb"] }, /^rule.tags_none: each tag must be/],
    ["unspecified platform", { platforms: [Platform.UNSPECIFIED] }, /^rule.platforms must name ios, android or web$/],
    ["unknown platform number", { platforms: [42 as Platform] }, /^rule.platforms must name/],
    ["language", { languages: ["en", "xx"] }, /^rule.languages must hold ISO 639-1 codes/],
    ["time zone", { timezones: ["Mars/Olympus_Mons"] }, /^rule.timezones must hold IANA time zone names/],
    [
      "too many app_versions",
      { appVersions: many(101) },
      /^rule.app_versions must hold at most 100 distinct versions$/,
    ],
    ["long app version", { appVersions: ["1".repeat(65)] }, /^rule.app_versions: each version must be 1-64 characters/],
    ["empty app version", { appVersions: [""] }, /^rule.app_versions: each version must be 1-64/],
    ["huge raw list", { languages: many(1_001, () => "en") }, /^rule.languages must hold at most 1000 values$/],
  ])("refuses %s", (_name, init, message) => {
    expect(invalidArgument(() => storedSegmentRule(init && rule(init)))).toMatch(message);
  });

  it("accepts the limits exactly", () => {
    const criteria = storedSegmentRule(
      rule({ tagsAny: many(100, (i) => `${i}`.padStart(64, "t")), appVersions: many(100) }),
    );
    expect(criteria.tagsAny).toHaveLength(100);
    expect(criteria.appVersions).toHaveLength(100);
  });
});

describe("segmentCriteria", () => {
  it("names the rule as the caller calls it", () => {
    expect(invalidArgument(() => segmentCriteria(rule({ timezones: ["Nowhere"] }), "segment"))).toMatch(
      /^segment.timezones/,
    );
  });

  it("lets an inline rule be empty: it selects every targetable device", () => {
    expect(segmentCriteria(rule({}), "segment")).toEqual({
      tagsAny: [],
      tagsAll: [],
      tagsNone: [],
      platforms: [],
      languages: [],
      appVersions: [],
      timezones: [],
      hasExternalId: undefined,
    });
  });
});

describe("segmentName", () => {
  it("trims", () => {
    expect(segmentName("  VIP users \t")).toBe("VIP users");
    expect(segmentName("é".repeat(200))).toHaveLength(200);
  });

  it.each([
    ["empty", ""],
    ["blank", "   "],
    ["too long", "n".repeat(201)],
    ["control character", "a\u0000b"],
  ])("refuses %s", (_name, name) => {
    expect(invalidArgument(() => segmentName(name))).toMatch(/^name must be 1-200 characters/);
  });
});
