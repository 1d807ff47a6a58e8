import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AudienceFilterSchema, SegmentRuleSchema } from "@herald/proto/device";
import { beforeAll, describe, expect, it } from "vitest";
import { useRegistry } from "./harness.js";
import { seed, type Seeded } from "./seed.js";

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("audience", () => {
  const r = useRegistry();
  let devices: Seeded[];
  let otherAppDevices: Seeded[];
  const appId = randomUUID();

  beforeAll(async () => {
    devices = await seed(r, appId, 10_000);
    otherAppDevices = await seed(r, randomUUID(), 200); // another app's devices must never appear
  });

  const expected = (match: (d: Seeded) => boolean) =>
    devices
      .filter((d) => d.targetable && match(d))
      .map((d) => d.id)
      .sort(byId);

  async function stream(req: {
    filter?: MessageInitShape<typeof AudienceFilterSchema>;
    pageSize?: number;
    afterDeviceId?: string;
    platform?: Platform;
  }) {
    const pages: string[][] = [];
    for await (const res of r.client.streamAudience({ appId, ...req })) pages.push(res.devices.map((d) => d.id));
    return { pages, ids: pages.flat() };
  }

  const all: MessageInitShape<typeof AudienceFilterSchema> = { target: { case: "all", value: {} } };

  it("streams every targetable device exactly once, in id order, in pages", async () => {
    const want = expected(() => true);
    expect(want.length).toBeGreaterThan(8_000);
    expect(want.length).toBeLessThan(10_000);
    const { pages, ids } = await stream({ filter: all, pageSize: 1_000 });
    expect(ids).toEqual(want);
    expect(pages.slice(0, -1).every((p) => p.length === 1_000)).toBe(true);
  });

  it("carries what a sender needs", async () => {
    const first = devices.filter((d) => d.targetable).sort((a, b) => byId(a.id, b.id))[0]!;
    const pages = [];
    for await (const res of r.client.streamAudience({ appId, filter: all, pageSize: 5_000 })) pages.push(res);
    expect(pages[0]!.devices[0]).toMatchObject({
      id: first.id,
      platform: { ios: Platform.IOS, android: Platform.ANDROID, web: Platform.WEB }[first.platform],
      pushToken: `tok-${appId}-${devices.indexOf(first)}`,
      language: first.language,
    });
  });

  it("uses the default page size and caps large ones", async () => {
    expect((await stream({ filter: all })).pages[0]).toHaveLength(1_000);
    expect((await stream({ filter: all, pageSize: 50_000 })).pages[0]).toHaveLength(5_000);
  });

  it("resumes after a device id", async () => {
    const want = expected(() => true);
    const { ids } = await stream({ filter: all, pageSize: 700, afterDeviceId: want[3_999] });
    expect(ids).toEqual(want.slice(4_000));
  });

  const filters: [string, MessageInitShape<typeof AudienceFilterSchema>, (d: Seeded) => boolean][] = [
    ["all", all, () => true],
    [
      "external ids",
      { target: { case: "externalIds", value: { externalIds: ["user-0", "user-42", "user-498", "nobody"] } } },
      (d) => ["user-0", "user-42", "user-498"].includes(d.external_id ?? ""),
    ],
    ["no external ids", { target: { case: "externalIds", value: { externalIds: [] } } }, () => false],
    ["tags any", seg({ tagsAny: ["vip", "churned"] }), (d) => d.tags.includes("vip") || d.tags.includes("churned")],
    ["tags all", seg({ tagsAll: ["vip", "beta"] }), (d) => d.tags.includes("vip") && d.tags.includes("beta")],
    ["tags none", seg({ tagsNone: ["beta"] }), (d) => !d.tags.includes("beta")],
    ["platforms", seg({ platforms: [Platform.IOS, Platform.WEB] }), (d) => d.platform !== "android"],
    ["languages", seg({ languages: ["de", "PT-br"] }), (d) => d.language === "de" || d.language === "pt"],
    ["app versions", seg({ appVersions: ["2.0"] }), (d) => d.app_version === "2.0"],
    ["timezones", seg({ timezones: ["America/New_York"] }), (d) => d.timezone === "America/New_York"],
    ["with external id", seg({ hasExternalId: true }), (d) => d.external_id !== null],
    ["without external id", seg({ hasExternalId: false }), (d) => d.external_id === null],
    [
      "combined rule",
      seg({
        tagsAny: ["beta"],
        tagsNone: ["churned"],
        platforms: [Platform.ANDROID],
        languages: ["en", "fr"],
        hasExternalId: true,
      }),
      (d) =>
        d.tags.includes("beta") &&
        !d.tags.includes("churned") &&
        d.platform === "android" &&
        ["en", "fr"].includes(d.language) &&
        d.external_id !== null,
    ],
  ];

  it.each(filters)("streams and counts the same devices: %s", async (_name, filter, match) => {
    const want = expected(match);
    const { ids } = await stream({ filter, pageSize: 2_000 });
    expect(ids).toEqual(want);
    const { count } = await r.client.countAudience({ appId, filter });
    expect(count).toBe(BigInt(want.length));
  });
  it("narrows streams and counts to one platform", async () => {
    const filter = seg({ tagsAny: ["beta"] });
    const want = expected((d) => d.platform === "web" && d.tags.includes("beta"));
    expect((await stream({ filter, platform: Platform.WEB, pageSize: 500 })).ids).toEqual(want);
    expect((await r.client.countAudience({ appId, filter, platform: Platform.WEB })).count).toBe(BigInt(want.length));
  });

  describe("by device ids", () => {
    const PLATFORM_ENUM = { ios: Platform.IOS, android: Platform.ANDROID, web: Platform.WEB };
    // Targetable and untargetable devices of every platform, an unknown id and another app's devices.
    const chosen = () => [
      ...devices.slice(0, 40).map((d) => d.id),
      devices[5_000]!.id.toUpperCase(),
      randomUUID(),
      ...otherAppDevices.slice(0, 5).map((d) => d.id),
    ];
    const byIds = (ids: string[]) => ({ target: { case: "deviceIds" as const, value: { deviceIds: ids } } });

    it("streams and counts only the app's targetable devices among the ids", async () => {
      const ids = chosen();
      const want = expected((d) => ids.includes(d.id) || d.id === devices[5_000]!.id);
      expect(want.length).toBeGreaterThan(20);
      expect(want.length).toBeLessThan(41);
      expect((await stream({ filter: byIds(ids), pageSize: 7 })).ids).toEqual(want);
      expect((await r.client.countAudience({ appId, filter: byIds(ids) })).count).toBe(BigInt(want.length));
    });

    it("walks each platform in id order, page by page", async () => {
      const ids = chosen();
      for (const platform of ["ios", "android", "web"] as const) {
        const want = expected((d) => d.platform === platform && ids.map((id) => id.toLowerCase()).includes(d.id));
        expect(want.length).toBeGreaterThan(3);
        const walked = await stream({ filter: byIds(ids), platform: PLATFORM_ENUM[platform], pageSize: 2 });
        expect(walked.ids).toEqual(want);
        expect(walked.pages.slice(0, -1).every((p) => p.length === 2)).toBe(true);
        const resumed = await stream({ filter: byIds(ids), platform: PLATFORM_ENUM[platform], afterDeviceId: want[1] });
        expect(resumed.ids).toEqual(want.slice(2));
        const { count } = await r.client.countAudience({
          appId,
          filter: byIds(ids),
          platform: PLATFORM_ENUM[platform],
        });
        expect(count).toBe(BigInt(want.length));
      }
    });

    it("finds no device of another app, nor an unknown one", async () => {
      const ids = [...otherAppDevices.slice(0, 99).map((d) => d.id), randomUUID()];
      expect((await stream({ filter: byIds(ids) })).ids).toEqual([]);
      expect((await r.client.countAudience({ appId, filter: byIds(ids) })).count).toBe(0n);
    });

    it("refuses malformed ids and more than 100", async () => {
      await expect(r.client.countAudience({ appId, filter: byIds(["not-a-uuid"]) })).rejects.toMatchObject({
        code: Code.InvalidArgument,
      });
      const many = devices.slice(0, 101).map((d) => d.id);
      await expect(stream({ filter: byIds(many) })).rejects.toMatchObject({ code: Code.InvalidArgument });
    });
  });

  describe("of a stored segment", () => {
    const segmentFilters = filters.filter(([, filter]) => filter.target?.case === "segment");

    it.each(segmentFilters)("streams and counts what the same rule inline does: %s", async (name, filter, match) => {
      const rule = filter.target?.case === "segment" ? filter.target.value : undefined;
      const { segment } = await r.client.createSegment({ appId, name, rule });
      const stored = { target: { case: "segmentId" as const, value: segment!.id } };
      const want = expected(match);
      expect(segment!.previewCount).toBe(BigInt(want.length));
      expect((await stream({ filter: stored, pageSize: 2_000 })).ids).toEqual(want);
      expect((await r.client.countAudience({ appId, filter: stored })).count).toBe(BigInt(want.length));
      for (const platform of [Platform.IOS, Platform.ANDROID]) {
        const inline = await r.client.countAudience({ appId, filter, platform });
        expect((await r.client.countAudience({ appId, filter: stored, platform })).count).toBe(inline.count);
        expect((await stream({ filter: stored, platform, pageSize: 700 })).ids).toEqual(
          (await stream({ filter, platform })).ids,
        );
      }
    });

    it("answers NOT_FOUND for a segment of another app, an unknown id and a malformed one", async () => {
      const { segment } = await r.client.createSegment({
        appId: randomUUID(),
        name: "elsewhere",
        rule: { tagsAny: ["vip"] },
      });
      for (const id of [segment!.id, randomUUID(), "not-a-uuid"]) {
        const filter = { target: { case: "segmentId" as const, value: id } };
        await expect(r.client.countAudience({ appId, filter })).rejects.toMatchObject({
          code: Code.NotFound,
          rawMessage: "segment not found",
        });
        await expect(stream({ filter })).rejects.toMatchObject({ code: Code.NotFound });
      }
    });

    it("follows the segment's rule as it is now", async () => {
      const { segment } = await r.client.createSegment({ appId, name: "changing", rule: { tagsAll: ["vip"] } });
      const stored = { target: { case: "segmentId" as const, value: segment!.id } };
      await r.client.updateSegment({ id: segment!.id, rule: { tagsAll: ["churned"] } });
      expect((await r.client.countAudience({ appId, filter: stored })).count).toBe(
        BigInt(expected((d) => d.tags.includes("churned")).length),
      );
      await r.client.deleteSegment({ id: segment!.id });
      await expect(r.client.countAudience({ appId, filter: stored })).rejects.toMatchObject({ code: Code.NotFound });
    });
  });

  describe("a page's cost", () => {
    interface PlanNode {
      "Node Type": string;
      "Index Name"?: string;
      "Actual Rows": number;
      "Actual Loops": number;
      Plans?: PlanNode[];
    }
    const scans = (node: PlanNode): PlanNode[] => [
      ...(/Scan/.test(node["Node Type"]) ? [node] : []),
      ...(node.Plans ?? []).flatMap(scans),
    ];
    async function plan(query: { text: string; values: unknown[] }): Promise<PlanNode> {
      const { rows } = await r.pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`,
        query.values,
      );
      return rows[0]!["QUERY PLAN"][0].Plan;
    }

    // The seeded devices were inserted in one statement and never analysed: the planner's
    // statistics are those a bulk import leaves. A page must still read about a page of
    // devices (one index scan per platform walk), never the rest of the app.
    it.each([["ios" as const], [undefined]])("reads only the page's devices (platform %s)", async (platform) => {
      const { audiencePageQuery } = await import("../src/audience-query.js");
      const query = audiencePageQuery(
        { appId, target: { kind: "all" }, ...(platform ? { platform } : {}) },
        undefined,
        100,
      );
      const found = scans(await plan(query));
      expect(found.length).toBe(platform ? 1 : 3);
      for (const scan of found) {
        expect(scan["Node Type"]).toBe("Index Scan");
        expect(scan["Index Name"]).toBe("devices_audience_idx");
        expect(scan["Actual Rows"] * scan["Actual Loops"]).toBeLessThanOrEqual(100);
      }
    });

    it("walks device ids through the same index, one scan per platform", async () => {
      const { audiencePageQuery } = await import("../src/audience-query.js");
      const deviceIds = devices.slice(0, 100).map((d) => d.id);
      const found = scans(
        await plan(audiencePageQuery({ appId, target: { kind: "deviceIds", deviceIds } }, undefined, 10)),
      );
      expect(found.length).toBe(3);
      for (const scan of found) {
        expect(scan["Index Name"]).toBe("devices_audience_idx");
        expect(scan["Actual Rows"] * scan["Actual Loops"]).toBeLessThanOrEqual(10);
      }
    });
  });
});

function seg(rule: MessageInitShape<typeof SegmentRuleSchema>): MessageInitShape<typeof AudienceFilterSchema> {
  return { target: { case: "segment", value: rule } };
}
