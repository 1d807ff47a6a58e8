import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import type { ListDevicesRequest } from "@herald/proto/device";
import { beforeAll, describe, expect, it } from "vitest";
import { rpcError, useRegistry } from "./harness.js";
import { seed, type Seeded } from "./seed.js";

type Filters = Pick<ListDevicesRequest, "platform" | "language" | "optedIn" | "invalid" | "externalId">;

/** A seeded device with the two flags seed() derives from its position. */
type Device = Seeded & { optedIn: boolean; invalid: boolean };

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("ListDevices filters", () => {
  const r = useRegistry();
  const appId = randomUUID();
  let devices: Device[];

  beforeAll(async () => {
    devices = (await seed(r, appId, 600)).map((d, i) => ({ ...d, optedIn: i % 10 !== 3, invalid: i % 13 === 5 }));
    await seed(r, randomUUID(), 50);
  });

  /** Every page of the listing: the ids in order and the total of the first answer. */
  async function listAll(filters: Filters): Promise<{ ids: string[]; total: number }> {
    const ids: string[] = [];
    let total = -1;
    for (let page = 1; ; page++) {
      const res = await r.client.listDevices({ appId, page: { page, perPage: 200 }, ...filters });
      if (total < 0) total = Number(res.page!.total);
      ids.push(...res.devices.map((d) => d.id));
      if (res.devices.length < 200) break;
    }
    return { ids, total };
  }

  // One statement seeded them all: one created_at, so the listing is in id order.
  const expected = (match: (d: Device) => boolean) => {
    const ids = devices
      .filter(match)
      .map((d) => d.id)
      .sort(byId);
    return { ids, total: ids.length };
  };

  it.each<[string, Filters, (d: Device) => boolean]>([
    ["no filter", {}, () => true],
    ["platform", { platform: Platform.WEB }, (d) => d.platform === "web"],
    ["language", { language: "de" }, (d) => d.language === "de"],
    ["language with a region, any case", { language: "PT-br" }, (d) => d.language === "pt"],
    ["opted out", { optedIn: false }, (d) => !d.optedIn],
    ["opted in", { optedIn: true }, (d) => d.optedIn],
    ["invalid", { invalid: true }, (d) => d.invalid],
    ["valid", { invalid: false }, (d) => !d.invalid],
    ["external id", { externalId: "user-42" }, (d) => d.external_id === "user-42"],
    [
      "all of them at once",
      { platform: Platform.IOS, language: "en", optedIn: true, invalid: false },
      (d) => d.platform === "ios" && d.language === "en" && d.optedIn && !d.invalid,
    ],
    [
      "platform and external id",
      { platform: Platform.IOS, externalId: "user-0" },
      (d) => d.platform === "ios" && d.external_id === "user-0",
    ],
  ])("%s: lists exactly the matching devices of the app, total counting them", async (_, filters, match) => {
    const want = expected(match);
    expect(want.total).toBeGreaterThan(0);
    expect(await listAll(filters)).toEqual(want);
  });

  it("pages a filtered listing without gaps or repeats", async () => {
    const want = expected((d) => d.language === "fr" && !d.invalid);
    const ids: string[] = [];
    for (let page = 1; page <= Math.ceil(want.total / 7); page++) {
      const res = await r.client.listDevices({ appId, page: { page, perPage: 7 }, language: "fr", invalid: false });
      expect(Number(res.page!.total)).toBe(want.total);
      ids.push(...res.devices.map((d) => d.id));
    }
    expect(ids).toEqual(want.ids);
  });

  it("matches nothing for values no device has", async () => {
    expect(await listAll({ externalId: "nobody" })).toEqual({ ids: [], total: 0 });
    expect(await listAll({ language: "ja" })).toEqual({ ids: [], total: 0 });
  });

  it.each<[Partial<Filters>, RegExp]>([
    [{ platform: Platform.UNSPECIFIED }, /platform must be ios, android or web/],
    [{ platform: 42 as Platform }, /platform must be ios, android or web/],
    [{ language: "zz" }, /language must be an ISO 639-1 code/],
    [{ language: "" }, /language must be an ISO 639-1 code/],
    [{ externalId: "" }, /external_id must not be empty/],
    [{ externalId: "x".repeat(256) }, /external_id must be at most 255 characters/],
    [{ externalId: "a\u0007b" }, /without control characters/],
  ])("refuses %o with INVALID_ARGUMENT", async (filters, message) => {
    const err = await rpcError(r.client.listDevices({ appId, ...filters }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(message);
  });

  it("walks the listing index with the filters, never the whole table", async () => {
    // A cold table gives the planner no reason to prefer an index; ask whether one is usable.
    const client = await r.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off");
      const plan = await client.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT id FROM devices WHERE app_id = $1 AND invalid = true ORDER BY created_at, id LIMIT 50",
        [appId],
      );
      expect(plan.rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(
        /Index Only Scan using devices_app_listing_idx/,
      );
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
  });
});
