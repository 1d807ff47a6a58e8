import { create } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import { SegmentRuleSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { segmentRuleView } from "../campaign-views.js";
import { toSegmentRule } from "./segments.js";

describe("toSegmentRule", () => {
  it("maps every part, platforms to the enum", () => {
    const rule = create(
      SegmentRuleSchema,
      toSegmentRule({
        tags_any: ["a"],
        tags_all: ["b"],
        tags_none: ["c"],
        platforms: ["ios", "android", "web"],
        languages: ["de"],
        app_versions: ["1.0"],
        timezones: ["Europe/Berlin"],
        has_external_id: true,
      }),
    );
    expect(rule).toMatchObject({
      tagsAny: ["a"],
      tagsAll: ["b"],
      tagsNone: ["c"],
      platforms: [Platform.IOS, Platform.ANDROID, Platform.WEB],
      languages: ["de"],
      appVersions: ["1.0"],
      timezones: ["Europe/Berlin"],
      hasExternalId: true,
    });
  });

  it("leaves parts that are not given empty, and has_external_id unset", () => {
    const rule = create(SegmentRuleSchema, toSegmentRule({ tags_none: ["churned"] }));
    expect(rule.tagsAny).toEqual([]);
    expect(rule.platforms).toEqual([]);
    expect(rule.hasExternalId).toBeUndefined();
  });

  it("round-trips through the view", () => {
    const json = { tags_all: ["x", "y"], platforms: ["web" as const], has_external_id: false };
    expect(segmentRuleView(create(SegmentRuleSchema, toSegmentRule(json)))).toEqual(json);
  });
});
