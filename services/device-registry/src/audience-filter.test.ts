import { create } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import { AudienceFilterSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { audience, audienceTarget, MAX_EXTERNAL_IDS } from "./audience-filter.js";

describe("audienceTarget", () => {
  it("requires a filter", () => {
    expect(() => audienceTarget(undefined)).toThrow(/filter must be one of/);
    expect(() => audienceTarget(create(AudienceFilterSchema))).toThrow(/filter must be one of/);
  });

  it("knows no stored segment yet", () => {
    const filter = create(AudienceFilterSchema, { target: { case: "segmentId", value: "7c9e6679-7425-40de-944b-e07fc1f90ae7" } });
    expect(() => audienceTarget(filter)).toThrow(/segment not found/);
  });

  it("deduplicates and bounds external ids", () => {
    const filter = (ids: string[]) => create(AudienceFilterSchema, { target: { case: "externalIds", value: { externalIds: ids } } });
    expect(audienceTarget(filter(["a", "b", "a"]))).toEqual({ kind: "externalIds", externalIds: ["a", "b"] });
    const tooMany = Array.from({ length: MAX_EXTERNAL_IDS + 1 }, (_, i) => `u${i}`);
    expect(() => audienceTarget(filter(tooMany))).toThrow(/at most 10000/);
  });

  it("maps platforms and normalises languages of a segment rule", () => {
    const filter = create(AudienceFilterSchema, {
      target: { case: "segment", value: { platforms: [Platform.IOS, Platform.IOS, Platform.WEB], languages: ["PT-br", "pt"], hasExternalId: false } },
    });
    expect(audienceTarget(filter)).toMatchObject({
      kind: "segment",
      rule: { platforms: ["ios", "web"], languages: ["pt"], hasExternalId: false },
    });
  });

  it("refuses an unspecified platform", () => {
    const filter = create(AudienceFilterSchema, { target: { case: "segment", value: { platforms: [Platform.UNSPECIFIED] } } });
    expect(() => audienceTarget(filter)).toThrow(/segment.platforms/);
  });

  it("narrows to a platform when one is set", () => {
    const all = create(AudienceFilterSchema, { target: { case: "all", value: {} } });
    expect(audience("a", all, undefined)).toEqual({ appId: "a", target: { kind: "all" } });
    expect(audience("a", all, Platform.ANDROID)).toEqual({ appId: "a", target: { kind: "all" }, platform: "android" });
    expect(() => audience("a", all, Platform.UNSPECIFIED)).toThrow(/platform must be/);
  });
});
