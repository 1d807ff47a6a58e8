import { randomBytes, randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import type { RegisterDeviceResult } from "@herald/proto/device";
import { createPool } from "@herald/runtime";
import { describe, expect, inject, it } from "vitest";
import { tokenHash } from "../src/push-token.js";
import { PgDeviceStore } from "../src/device-store.js";
import { startRegistry, useRegistry } from "./harness.js";

// RegisterDevices: many registrations in one statement, each exactly as RegisterDevice.

const iosToken = () => randomBytes(32).toString("hex");

const registered = (r: RegisterDeviceResult | undefined) => {
  if (r?.result.case !== "registered") throw new Error(`not registered: ${JSON.stringify(r?.result)}`);
  return r.result.value;
};

describe("RegisterDevices", () => {
  const r = useRegistry();
  const appId = randomUUID();

  it("creates new tokens and updates known ones as RegisterDevice does: unset keeps, set replaces, invalid clears", async () => {
    const known = iosToken();
    const first = await r.client.registerDevice({
      appId,
      pushToken: known,
      platform: Platform.IOS,
      externalId: "u1",
      language: "en",
      tags: { tags: ["a"] },
    });
    await new Promise((res) => setTimeout(res, 5));
    await r.client.invalidateDevices({
      invalidations: [
        { deviceId: first.device!.id, observedAt: timestampFromDate(new Date()), reason: "Unregistered" },
      ],
    });
    const fresh = iosToken();
    const otherApp = randomUUID();
    const { results } = await r.client.registerDevices({
      devices: [
        { appId, pushToken: known.toUpperCase(), platform: Platform.IOS, language: "de", appVersion: "2.0" },
        { appId, pushToken: fresh, platform: Platform.IOS, timezone: "Europe/Berlin", tags: { tags: ["x", "y"] } },
        { appId: otherApp, pushToken: known, platform: Platform.IOS },
      ],
    });
    expect(results).toHaveLength(3);
    const [updated, created, elsewhere] = results.map(registered);
    expect(updated).toMatchObject({
      created: false,
      device: {
        id: first.device!.id,
        language: "de",
        appVersion: "2.0",
        externalId: "u1",
        tags: ["a"],
        invalid: false,
      },
    });
    expect(created).toMatchObject({
      created: true,
      device: { appId, pushToken: fresh, timezone: "Europe/Berlin", tags: ["x", "y"], optedIn: true, invalid: false },
    });
    expect(created!.device!.externalId).toBeUndefined();
    expect(elsewhere).toMatchObject({ created: true, device: { appId: otherApp, pushToken: known } });
    expect(elsewhere!.device!.id).not.toBe(first.device!.id);
    // what was stored is what was answered
    const stored = await r.client.getDevice({ id: created!.device!.id });
    expect(stored.device).toEqual(created!.device);
  });

  it("reports an invalid registration in its place and writes the others", async () => {
    const good = iosToken();
    const { results } = await r.client.registerDevices({
      devices: [
        { appId, pushToken: "not-hex", platform: Platform.IOS },
        { appId, pushToken: good, platform: Platform.IOS },
        { appId: "not-a-uuid", pushToken: iosToken(), platform: Platform.IOS },
        { appId, pushToken: iosToken(), platform: Platform.IOS, language: "zz-not-a-language" },
      ],
    });
    expect(results.map((x) => x.result.case)).toEqual([
      "invalidArgument",
      "registered",
      "invalidArgument",
      "invalidArgument",
    ]);
    expect(results[0]!.result.value).toMatch(/push_token/);
    expect(results[2]!.result.value).toMatch(/app_id/);
    expect(results[3]!.result.value).toMatch(/language/);
    expect(registered(results[1]).device!.pushToken).toBe(good);
  });

  it("applies a token repeated in one call in order: one row, the last write wins", async () => {
    const token = iosToken();
    const { results } = await r.client.registerDevices({
      devices: [
        { appId, pushToken: token, platform: Platform.IOS, appVersion: "1", externalId: "first" },
        { appId, pushToken: iosToken(), platform: Platform.IOS },
        { appId, pushToken: token, platform: Platform.IOS, appVersion: "2" },
      ],
    });
    const [a, , b] = results.map(registered);
    expect(a!.created).toBe(true);
    expect(b).toMatchObject({ created: false, device: { id: a!.device!.id, appVersion: "2", externalId: "first" } });
    const { rows } = await r.pool.query(
      "SELECT count(*)::int AS n FROM devices WHERE app_id = $1 AND push_token = $2",
      [appId, token],
    );
    expect(rows[0].n).toBe(1);
  });

  it("converges when concurrent calls register the same tokens: one row each, exactly one created", async () => {
    const tokens = Array.from({ length: 40 }, iosToken);
    const calls = await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        r.client.registerDevices({
          // each call in its own order, so that the batches race on every row
          devices: (k % 2 ? [...tokens].reverse() : tokens).map((pushToken) => ({
            appId,
            pushToken,
            platform: Platform.IOS,
            appVersion: String(k),
          })),
        }),
      ),
    );
    for (const token of tokens) {
      const answers = calls.map((c) => c.results.map(registered).find((x) => x!.device!.pushToken === token)!);
      expect(new Set(answers.map((a) => a.device!.id)).size).toBe(1);
      expect(answers.filter((a) => a.created)).toHaveLength(1);
    }
    const { rows } = await r.pool.query(
      "SELECT count(*)::int AS n FROM devices WHERE app_id = $1 AND push_token = ANY($2::text[])",
      [appId, tokens],
    );
    expect(rows[0].n).toBe(tokens.length);
  });

  it("matches each written row to its registration when the app id is in capitals", async () => {
    const store = new PgDeviceStore(r.pool);
    const app = randomUUID().toUpperCase();
    const devices = [iosToken(), iosToken()].map((pushToken) => ({ appId: app, pushToken, platform: "ios" as const }));
    const registered = await store.registerMany(devices);
    expect(registered.map((x) => [x.device.push_token, x.created])).toEqual(devices.map((d) => [d.pushToken, true]));
    const more = { appId: app, pushToken: iosToken(), platform: "ios" as const };
    expect(await store.importDevices([{ ...devices[0]!, language: "de" }, more])).toEqual(["updated", "created"]);
  });

  it("writes a token repeated under one app id in two cases as one device, in order", async () => {
    const store = new PgDeviceStore(r.pool);
    const app = randomUUID();
    const pushToken = iosToken();
    const [upper, lower] = await store.registerMany([
      { appId: app.toUpperCase(), pushToken, platform: "ios", language: "en" },
      { appId: app, pushToken, platform: "ios", language: "de" },
      { appId: app, pushToken: iosToken(), platform: "ios" },
    ]);
    expect(upper!.created).toBe(true);
    expect(lower).toMatchObject({ created: false, device: { id: upper!.device.id, language: "de" } });
  });

  it("runs an import batch again when it loses a deadlock with a concurrent write of its tokens", async () => {
    const store = new PgDeviceStore(r.pool);
    const app = randomUUID();
    // first and second in the order the batch writes its rows (token hash)
    const [first, second] = [iosToken(), iosToken()].sort((x, y) =>
      tokenHash(x).toString("hex").localeCompare(tokenHash(y).toString("hex")),
    );
    const device = (pushToken: string) => ({ appId: app, pushToken, platform: "ios" as const, language: "en" });
    await store.importDevices([device(first!), device(second!)]);
    const other = await r.pool.connect();
    try {
      await other.query("BEGIN");
      await other.query("UPDATE devices SET app_version = 'other' WHERE app_id = $1 AND push_token = $2", [
        app,
        second,
      ]);
      // The batch locks its first row, then waits for the second; the other transaction
      // then waits for the first: the batch, waiting longer, is the deadlock's victim.
      const imported = store.importDevices([
        { ...device(first!), language: "de" },
        { ...device(second!), language: "de" },
      ]);
      await new Promise((res) => setTimeout(res, 300));
      await other.query("UPDATE devices SET app_version = 'other' WHERE app_id = $1 AND push_token = $2", [app, first]);
      await other.query("COMMIT");
      expect(await imported).toEqual(["updated", "updated"]);
    } finally {
      other.release();
    }
    const { rows } = await r.pool.query(
      "SELECT language, app_version FROM devices WHERE app_id = $1 ORDER BY push_token",
      [app],
    );
    expect(rows).toEqual([
      { language: "de", app_version: "other" },
      { language: "de", app_version: "other" },
    ]);
  });

  it("refuses more than 1,000 registrations in one call", async () => {
    const devices = Array.from({ length: 1_001 }, () => ({ appId, pushToken: iosToken(), platform: Platform.IOS }));
    await expect(r.client.registerDevices({ devices })).rejects.toThrow(/at most 1000/);
  });

  it("prepares its write statements once per connection instead of planning each call", async () => {
    const pool = createPool({ url: inject("infra").databaseUrl, schema: r.schema, max: 1 });
    try {
      const store = new PgDeviceStore(pool);
      const device = () => ({ appId, pushToken: iosToken(), platform: "ios" as const });
      await store.registerMany([device(), device()]);
      await store.registerMany([device()]);
      await store.importDevices([device()]);
      await store.registerMany([device(), device()]);
      const { rows } = await pool.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE NOT from_sql ORDER BY name",
      );
      expect(rows.map((row) => row.name)).toEqual([
        "device_registry.import.0",
        "device_registry.register",
        "device_registry.register_batch.0",
      ]);
    } finally {
      await pool.end();
    }
  });

  it("finds stored rows through the token key alone, whatever the table held when its statements were planned", async () => {
    // A prepared statement's plan is made once per connection and kept: one made on an
    // empty, never analysed table must not read the app's devices in bulk later.
    const fresh = await startRegistry();
    const pool = createPool({ url: inject("infra").databaseUrl, schema: fresh.schema, max: 1 });
    const app = randomUUID();
    const device = (language?: string) => ({ appId: app, pushToken: iosToken(), platform: "ios" as const, language });
    const bulkReads = async () => {
      await pool.query("SELECT pg_stat_force_next_flush()");
      const { rows } = await pool.query<{ n: string }>(
        `SELECT (SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'devices')
              + (SELECT sum(idx_scan) FROM pg_stat_user_indexes
                 WHERE schemaname = $1 AND relname = 'devices' AND indexrelname <> 'devices_app_token_key') AS n`,
        [fresh.schema],
      );
      return Number(rows[0]!.n);
    };
    try {
      const store = new PgDeviceStore(pool);
      for (let k = 0; k < 8; k++) {
        await store.importDevices([device("en"), device("en")]);
        await store.registerMany([device("de"), device("de")]);
      }
      await pool.query(
        `INSERT INTO devices (app_id, token_hash, push_token, platform)
         SELECT $1, sha256(g::text::bytea), encode(sha256(g::text::bytea), 'hex'), 'ios' FROM generate_series(1, 20000) g`,
        [app],
      );
      const before = await bulkReads();
      const known = device("en");
      await store.registerMany([known, device("en")]);
      const imported = [device("en"), { ...known, language: "fr" }, ...Array.from({ length: 500 }, () => device("en"))];
      expect(await store.importDevices(imported)).toEqual(
        imported.map((d) => (d === imported[1] ? "updated" : "created")),
      );
      await store.registerMany([device("de"), { ...known, language: "es" }]);
      expect(await bulkReads()).toBe(before);
      const { rows } = await pool.query("SELECT language FROM devices WHERE app_id = $1 AND push_token = $2", [
        app,
        known.pushToken,
      ]);
      expect(rows).toEqual([{ language: "es" }]);
    } finally {
      await pool.end();
      await fresh.stop();
    }
  });
});
