import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import type { SegmentRuleSchema } from "@herald/proto/device";
import { beforeAll, describe, expect, it } from "vitest";
import { rpcError, useRegistry } from "./harness.js";
import { seed } from "./seed.js";

describe("segments", () => {
  const r = useRegistry();
  const appId = randomUUID();

  beforeAll(async () => {
    await seed(r, appId, 600);
  });

  it("creates, reads, lists, updates and deletes a segment", async () => {
    const created = (
      await r.client.createSegment({
        appId,
        name: "  German VIPs ",
        rule: { tagsAny: ["vip", "vip"], languages: ["DE-at"], timezones: ["america/new_york"] },
      })
    ).segment!;
    expect(created).toMatchObject({
      appId,
      name: "German VIPs",
      rule: {
        tagsAny: ["vip"],
        tagsAll: [],
        tagsNone: [],
        platforms: [],
        languages: ["de"],
        appVersions: [],
        timezones: ["America/New_York"],
      },
    });
    expect(created.rule?.hasExternalId).toBeUndefined();
    expect(created.previewCount).toBeGreaterThan(0n);
    expect(created.createdAt).toEqual(created.updatedAt);

    expect((await r.client.getSegment({ id: created.id })).segment).toEqual(created);

    const renamed = (await r.client.updateSegment({ id: created.id, name: "VIPs in Berlin" })).segment!;
    expect(renamed).toMatchObject({
      id: created.id,
      name: "VIPs in Berlin",
      rule: created.rule,
      createdAt: created.createdAt,
    });
    // Only Create and Get count devices.
    expect(renamed.previewCount).toBeUndefined();

    const rule = { platforms: [Platform.IOS, Platform.WEB], hasExternalId: false };
    const changed = (await r.client.updateSegment({ id: created.id, rule })).segment!;
    expect(changed).toMatchObject({
      name: "VIPs in Berlin",
      rule: { ...rule, tagsAny: [], languages: [], timezones: [] },
    });
    const read = (await r.client.getSegment({ id: created.id })).segment!;
    expect(read.rule).toEqual(changed.rule);
    expect(read.previewCount).toBe(
      (await r.client.countAudience({ appId, filter: { target: { case: "segment", value: rule } } })).count,
    );

    await r.client.deleteSegment({ id: created.id });
    expect((await rpcError(r.client.getSegment({ id: created.id }))).code).toBe(Code.NotFound);
    expect((await rpcError(r.client.deleteSegment({ id: created.id }))).code).toBe(Code.NotFound);
  });

  it.each<[string, MessageInitShape<typeof SegmentRuleSchema>]>([
    ["tags", { tagsAny: ["beta", "vip"], tagsNone: ["churned"] }],
    ["platform and versions", { platforms: [Platform.ANDROID], appVersions: ["1.0", "3.0"] }],
    ["users only", { hasExternalId: true, languages: ["pt-BR", "fr"] }],
  ])("previews as many devices as CountAudience counts for the rule inline: %s", async (name, rule) => {
    const inline = await r.client.countAudience({ appId, filter: { target: { case: "segment", value: rule } } });
    expect(inline.count).toBeGreaterThan(0n);
    const created = (await r.client.createSegment({ appId, name: `preview ${name}`, rule })).segment!;
    expect(created.previewCount).toBe(inline.count);
    expect((await r.client.getSegment({ id: created.id })).segment?.previewCount).toBe(inline.count);
  });

  it("keeps names unique per app", async () => {
    const rule = { tagsAll: ["beta"] };
    const first = (await r.client.createSegment({ appId, name: "Beta testers", rule })).segment!;
    const taken = await rpcError(r.client.createSegment({ appId, name: " Beta testers ", rule }));
    expect(taken.code).toBe(Code.AlreadyExists);
    expect(taken.rawMessage).toMatch(/Beta testers/);

    const second = (await r.client.createSegment({ appId, name: "Beta testers 2", rule })).segment!;
    expect((await rpcError(r.client.updateSegment({ id: second.id, name: "Beta testers" }))).code).toBe(
      Code.AlreadyExists,
    );
    expect((await r.client.getSegment({ id: second.id })).segment?.name).toBe("Beta testers 2");

    // Another app may use the same name.
    expect((await r.client.createSegment({ appId: randomUUID(), name: "Beta testers", rule })).segment?.name).toBe(
      "Beta testers",
    );
    expect(first.name).toBe("Beta testers");
  });

  it("answers NOT_FOUND for unknown and malformed ids", async () => {
    for (const id of [randomUUID(), "not-a-uuid", ""]) {
      expect((await rpcError(r.client.getSegment({ id }))).code).toBe(Code.NotFound);
      expect((await rpcError(r.client.updateSegment({ id, name: "x" }))).code).toBe(Code.NotFound);
      expect((await rpcError(r.client.deleteSegment({ id }))).code).toBe(Code.NotFound);
    }
  });

  it("lists an app's segments in creation order, paged", async () => {
    const app = randomUUID();
    const ids: string[] = [];
    for (const name of ["c", "a", "b", "e", "d"]) {
      ids.push((await r.client.createSegment({ appId: app, name, rule: { tagsAny: [name] } })).segment!.id);
    }
    await r.client.createSegment({ appId: randomUUID(), name: "other app", rule: { tagsAny: ["x"] } });

    const first = await r.client.listSegments({ appId: app, page: { page: 1, perPage: 2 } });
    expect(first.segments.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.page).toMatchObject({ page: 1, perPage: 2, total: 5n });
    expect(first.segments[0]!.rule?.tagsAny).toEqual(["c"]);
    expect(first.segments[0]!.previewCount).toBeUndefined();
    const last = await r.client.listSegments({ appId: app, page: { page: 3, perPage: 2 } });
    expect(last.segments.map((s) => s.id)).toEqual(ids.slice(4));
    const all = await r.client.listSegments({ appId: app });
    expect(all.segments.map((s) => s.id)).toEqual(ids);
    expect(all.page).toMatchObject({ page: 1, perPage: 50, total: 5n });
    expect((await r.client.listSegments({ appId: randomUUID() })).page?.total).toBe(0n);
  });

  it.each<[string, () => Promise<unknown>, RegExp]>([
    [
      "app_id",
      () => r.client.createSegment({ appId: "app-1", name: "n", rule: { tagsAny: ["a"] } }),
      /app_id must be a UUID/,
    ],
    [
      "name",
      () => r.client.createSegment({ appId, name: " ", rule: { tagsAny: ["a"] } }),
      /name must be 1-200 characters/,
    ],
    ["missing rule", () => r.client.createSegment({ appId, name: "n" }), /rule is required/],
    [
      "empty rule",
      () => r.client.createSegment({ appId, name: "n", rule: {} }),
      /rule must set at least one condition/,
    ],
    [
      "platform",
      () => r.client.createSegment({ appId, name: "n", rule: { platforms: [Platform.UNSPECIFIED] } }),
      /rule.platforms/,
    ],
    [
      "language",
      () => r.client.createSegment({ appId, name: "n", rule: { languages: ["klingon"] } }),
      /rule.languages/,
    ],
    [
      "time zone",
      () => r.client.createSegment({ appId, name: "n", rule: { timezones: ["Mars/Base"] } }),
      /rule.timezones/,
    ],
    ["tag", () => r.client.createSegment({ appId, name: "n", rule: { tagsNone: ["x".repeat(65)] } }), /rule.tags_none/],
    ["update name", () => r.client.updateSegment({ id: randomUUID(), name: "" }), /name must be/],
    [
      "update rule",
      () => r.client.updateSegment({ id: randomUUID(), rule: {} }),
      /rule must set at least one condition/,
    ],
    ["list app_id", () => r.client.listSegments({ appId: "x" }), /app_id must be a UUID/],
  ])("refuses a bad %s with INVALID_ARGUMENT naming the field", async (_name, call, message) => {
    const err = await rpcError(call());
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(message);
  });
});
