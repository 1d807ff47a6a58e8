import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { AudienceFilterSchema, SegmentRuleSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { audience, audienceTarget, MAX_DEVICE_IDS, MAX_EXTERNAL_IDS, type SegmentLookup } from "./audience-filter.js";
import { audienceCountQuery, audiencePageQuery, type SegmentCriteria } from "./audience-query.js";
import { storedSegmentRule } from "./segment-rule.js";
import { fromStoredRule, toStoredRule, type StoredRule } from "./segment-store.js";

const APP = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const SEGMENT = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
const noSegments: SegmentLookup = async () => undefined;

/** A lookup over one stored segment of APP, its rule read back the way the store reads jsonb. */
function storedSegment(rule: SegmentCriteria): SegmentLookup {
  const json = JSON.parse(JSON.stringify(toStoredRule(rule))) as StoredRule;
  return async (appId, id) => (appId === APP && id === SEGMENT ? fromStoredRule(json) : undefined);
}

const segmentFilter = (rule: MessageInitShape<typeof SegmentRuleSchema>) =>
  create(AudienceFilterSchema, { target: { case: "segment", value: rule } });
const segmentIdFilter = (id: string) => create(AudienceFilterSchema, { target: { case: "segmentId", value: id } });

async function rejection(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected a rejection");
}

describe("audienceTarget", () => {
  it("requires a filter", async () => {
    await expect(audienceTarget(APP, undefined, noSegments)).rejects.toThrow(/filter must be one of/);
    await expect(audienceTarget(APP, create(AudienceFilterSchema), noSegments)).rejects.toThrow(
      /filter must be one of/,
    );
  });

  it("deduplicates and bounds external ids", async () => {
    const filter = (ids: string[]) =>
      create(AudienceFilterSchema, { target: { case: "externalIds", value: { externalIds: ids } } });
    expect(await audienceTarget(APP, filter(["a", "b", "a"]), noSegments)).toEqual({
      kind: "externalIds",
      externalIds: ["a", "b"],
    });
    const tooMany = Array.from({ length: MAX_EXTERNAL_IDS + 1 }, (_, i) => `u${i}`);
    await expect(audienceTarget(APP, filter(tooMany), noSegments)).rejects.toThrow(/at most 10000/);
  });

  it("lowercases, deduplicates and bounds device ids, refusing what is not a UUID", async () => {
    const filter = (ids: string[]) =>
      create(AudienceFilterSchema, { target: { case: "deviceIds", value: { deviceIds: ids } } });
    expect(await audienceTarget(APP, filter([SEGMENT.toUpperCase(), SEGMENT, APP]), noSegments)).toEqual({
      kind: "deviceIds",
      deviceIds: [SEGMENT, APP],
    });
    const err = await rejection(audienceTarget(APP, filter([APP, "not-a-uuid"]), noSegments));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/device_ids must be UUIDs/);
    const tooMany = Array.from(
      { length: MAX_DEVICE_IDS + 1 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    );
    await expect(audienceTarget(APP, filter(tooMany), noSegments)).rejects.toThrow(/at most 100 ids/);
  });

  it("maps platforms and normalises languages of a segment rule", async () => {
    const filter = segmentFilter({
      platforms: [Platform.IOS, Platform.IOS, Platform.WEB],
      languages: ["PT-br", "pt"],
      hasExternalId: false,
    });
    expect(await audienceTarget(APP, filter, noSegments)).toMatchObject({
      kind: "segment",
      rule: { platforms: ["ios", "web"], languages: ["pt"], hasExternalId: false },
    });
  });

  it("refuses an unspecified platform", async () => {
    await expect(audienceTarget(APP, segmentFilter({ platforms: [Platform.UNSPECIFIED] }), noSegments)).rejects.toThrow(
      /segment.platforms/,
    );
  });

  it("answers NOT_FOUND for an unknown, malformed or other app's segment id", async () => {
    const lookup = storedSegment(storedSegmentRule(create(SegmentRuleSchema, { tagsAny: ["vip"] })));
    for (const [appId, id] of [
      [APP, "0e0b1d4e-4b8e-4c55-9b37-7a2b64f7e111"],
      [APP, "segment-1"],
      ["4a1c0f7e-5b3d-4f2a-8c6e-9d0b1a2c3d4e", SEGMENT],
    ]) {
      const err = await rejection(audienceTarget(appId!, segmentIdFilter(id!), lookup));
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toBe("segment not found");
    }
  });

  it("does not look up a malformed segment id", async () => {
    const lookup: SegmentLookup = async () => {
      throw new Error("looked up");
    };
    await expect(audienceTarget(APP, segmentIdFilter("x'; DROP TABLE segments"), lookup)).rejects.toThrow(
      /segment not found/,
    );
  });
});

describe("a stored segment", () => {
  const rules: [string, MessageInitShape<typeof SegmentRuleSchema>][] = [
    ["tags", { tagsAny: ["vip", "beta"], tagsAll: ["paid"], tagsNone: ["churned"] }],
    ["platforms and languages", { platforms: [Platform.ANDROID, Platform.WEB], languages: ["de", "PT-br"] }],
    ["versions and time zones", { appVersions: ["1.0", "2.0"], timezones: ["europe/berlin", "America/New_York"] }],
    ["external id only", { hasExternalId: false }],
    [
      "every part",
      {
        tagsAny: ["a"],
        tagsAll: ["b"],
        tagsNone: ["c"],
        platforms: [Platform.IOS],
        languages: ["en"],
        appVersions: ["3.1"],
        timezones: ["Asia/Kolkata"],
        hasExternalId: true,
      },
    ],
  ];

  it.each(rules)("selects with the same SQL as its rule inline: %s", async (_name, init) => {
    const rule = create(SegmentRuleSchema, init);
    const lookup = storedSegment(storedSegmentRule(rule));
    for (const platform of [undefined, Platform.WEB]) {
      const inline = await audience(APP, segmentFilter(init), platform, noSegments);
      const stored = await audience(APP, segmentIdFilter(SEGMENT), platform, lookup);
      expect(audienceCountQuery(stored)).toEqual(audienceCountQuery(inline));
      expect(audiencePageQuery(stored, SEGMENT, 500)).toEqual(audiencePageQuery(inline, SEGMENT, 500));
    }
  });
});

describe("audience", () => {
  it("narrows to a platform when one is set", async () => {
    const all = create(AudienceFilterSchema, { target: { case: "all", value: {} } });
    expect(await audience("a", all, undefined, noSegments)).toEqual({ appId: "a", target: { kind: "all" } });
    expect(await audience("a", all, Platform.ANDROID, noSegments)).toEqual({
      appId: "a",
      target: { kind: "all" },
      platform: "android",
    });
    await expect(audience("a", all, Platform.UNSPECIFIED, noSegments)).rejects.toThrow(/platform must be/);
  });
});
