import { describe, expect, it } from "vitest";
import { audienceCountQuery, audiencePageQuery, deviceRuleMatchQuery, type SegmentCriteria } from "./audience-query.js";

const APP = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const AFTER = "00000000-0000-4000-8000-000000000001";
const TARGETABLE = "app_id = $1::uuid AND opted_in AND NOT invalid";
const emptyRule: SegmentCriteria = {
  tagsAny: [],
  tagsAll: [],
  tagsNone: [],
  platforms: [],
  languages: [],
  appVersions: [],
  timezones: [],
};

describe("audiencePageQuery", () => {
  const COLUMNS = "SELECT id, platform, push_token, language FROM devices";

  it("walks one platform's targetable devices in id order", () => {
    expect(audiencePageQuery({ appId: APP, target: { kind: "all" }, platform: "ios" }, undefined, 1000)).toEqual({
      text: `${COLUMNS} WHERE ${TARGETABLE} AND platform = $2 ORDER BY id LIMIT $3`,
      values: [APP, "ios", 1000],
    });
  });

  it("resumes after a device id", () => {
    expect(audiencePageQuery({ appId: APP, target: { kind: "all" }, platform: "android" }, AFTER, 500)).toEqual({
      text: `${COLUMNS} WHERE ${TARGETABLE} AND platform = $2 AND id > $3::uuid ORDER BY id LIMIT $4`,
      values: [APP, "android", AFTER, 500],
    });
  });

  it("selects external ids as one array parameter", () => {
    const q = audiencePageQuery(
      { appId: APP, target: { kind: "externalIds", externalIds: ["u1", "u'2; DROP TABLE devices"] }, platform: "web" },
      AFTER,
      10,
    );
    expect(q.text).toBe(
      `${COLUMNS} WHERE ${TARGETABLE} AND platform = $2 AND external_id = ANY($3::text[]) AND id > $4::uuid ` +
        "ORDER BY id LIMIT $5",
    );
    expect(q.values).toEqual([APP, "web", ["u1", "u'2; DROP TABLE devices"], AFTER, 10]);
  });

  it("selects device ids as one uuid array parameter inside the platform's keyset walk", () => {
    const ids = [AFTER, APP];
    const q = audiencePageQuery(
      { appId: APP, target: { kind: "deviceIds", deviceIds: ids }, platform: "ios" },
      AFTER,
      10,
    );
    expect(q.text).toBe(
      `${COLUMNS} WHERE ${TARGETABLE} AND platform = $2 AND id = ANY($3::uuid[]) AND id > $4::uuid ` +
        "ORDER BY id LIMIT $5",
    );
    expect(q.values).toEqual([APP, "ios", ids, AFTER, 10]);
  });

  it("without a platform, merges the three per-platform walks in id order", () => {
    const q = audiencePageQuery({ appId: APP, target: { kind: "all" } }, AFTER, 10);
    const walk = (n: number) =>
      `(${COLUMNS} WHERE app_id = $${n}::uuid AND opted_in AND NOT invalid AND platform = $${n + 1} ` +
      `AND id > $${n + 2}::uuid ORDER BY id LIMIT $${n + 3})`;
    expect(q.text).toBe(
      `SELECT id, platform, push_token, language FROM (${walk(1)} UNION ALL ${walk(5)} ` +
        `UNION ALL ${walk(9)}) AS page ORDER BY id LIMIT $13`,
    );
    expect(q.values).toEqual([APP, "ios", AFTER, 10, APP, "android", AFTER, 10, APP, "web", AFTER, 10, 10]);
  });

  it("adds no condition for an empty segment rule", () => {
    expect(
      audiencePageQuery({ appId: APP, target: { kind: "segment", rule: emptyRule }, platform: "ios" }, undefined, 10),
    ).toEqual(audiencePageQuery({ appId: APP, target: { kind: "all" }, platform: "ios" }, undefined, 10));
  });
});

describe("audienceCountQuery", () => {
  it("counts what the walk would yield", () => {
    expect(audienceCountQuery({ appId: APP, target: { kind: "all" } })).toEqual({
      text: `SELECT count(*)::bigint AS count FROM devices WHERE ${TARGETABLE}`,
      values: [APP],
    });
    expect(audienceCountQuery({ appId: APP, target: { kind: "externalIds", externalIds: ["a"] } })).toEqual({
      text: `SELECT count(*)::bigint AS count FROM devices WHERE ${TARGETABLE} AND external_id = ANY($2::text[])`,
      values: [APP, ["a"]],
    });
    expect(audienceCountQuery({ appId: APP, target: { kind: "deviceIds", deviceIds: [AFTER] } })).toEqual({
      text: `SELECT count(*)::bigint AS count FROM devices WHERE ${TARGETABLE} AND id = ANY($2::uuid[])`,
      values: [APP, [AFTER]],
    });
  });

  it.each<[string, Partial<SegmentCriteria>, string, unknown[]]>([
    ["tags_any", { tagsAny: ["a", "b"] }, "tags && $2::text[]", [["a", "b"]]],
    ["tags_all", { tagsAll: ["a", "b"] }, "tags @> $2::text[]", [["a", "b"]]],
    ["tags_none", { tagsNone: ["x"] }, "NOT (tags && $2::text[])", [["x"]]],
    ["platforms", { platforms: ["ios", "web"] }, "platform = ANY($2::text[])", [["ios", "web"]]],
    ["languages", { languages: ["de"] }, "language = ANY($2::text[])", [["de"]]],
    ["app_versions", { appVersions: ["1.0"] }, "app_version = ANY($2::text[])", [["1.0"]]],
    ["timezones", { timezones: ["Europe/Berlin"] }, "timezone = ANY($2::text[])", [["Europe/Berlin"]]],
    ["has_external_id true", { hasExternalId: true }, "external_id IS NOT NULL", []],
    ["has_external_id false", { hasExternalId: false }, "external_id IS NULL", []],
  ])("segment %s", (_name, part, condition, values) => {
    expect(audienceCountQuery({ appId: APP, target: { kind: "segment", rule: { ...emptyRule, ...part } } })).toEqual({
      text: `SELECT count(*)::bigint AS count FROM devices WHERE ${TARGETABLE} AND ${condition}`,
      values: [APP, ...values],
    });
  });

  it("combines every set part of a rule with AND, numbering parameters in order", () => {
    const q = audienceCountQuery({
      appId: APP,
      target: {
        kind: "segment",
        rule: { ...emptyRule, tagsAny: ["a"], tagsNone: ["b"], platforms: ["android"], hasExternalId: true },
      },
    });
    expect(q.text).toBe(
      `SELECT count(*)::bigint AS count FROM devices WHERE ${TARGETABLE} AND tags && $2::text[] ` +
        "AND NOT (tags && $3::text[]) AND platform = ANY($4::text[]) AND external_id IS NOT NULL",
    );
    expect(q.values).toEqual([APP, ["a"], ["b"], ["android"]]);
  });
});

describe("deviceRuleMatchQuery", () => {
  it("evaluates each rule against one device with the audience conditions, targetable or not", () => {
    const q = deviceRuleMatchQuery(AFTER, [
      { ...emptyRule, tagsAny: ["vip"], languages: ["de"] },
      { ...emptyRule, hasExternalId: false },
      emptyRule,
    ]);
    expect(q).toEqual({
      text:
        "SELECT ARRAY[(tags && $1::text[] AND language = ANY($2::text[])), (external_id IS NULL), true]::boolean[] " +
        "AS matches FROM devices WHERE id = $3::uuid",
      values: [["vip"], ["de"], AFTER],
    });
    expect(q.text).not.toMatch(/opted_in|invalid/);
  });
});
