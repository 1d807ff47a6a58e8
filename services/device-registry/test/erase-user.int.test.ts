import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { type InAppAudienceSchema, InAppEventType } from "@herald/proto/in_app_message";
import { EVENT_ID } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { registerDevice, rpcError, useRegistry } from "./harness.js";
import { afterSentinel, waitForEvents } from "./webhook-stream.js";

const r = useRegistry();

describe("LookupDevices", () => {
  it("answers the app's devices among the ids, in the order asked, leaving out others' and unknown ones", async () => {
    const appId = randomUUID();
    const withUser = await registerDevice(r, appId, { externalId: "user-1" });
    const anonymous = await registerDevice(r, appId, { platform: Platform.ANDROID });
    const foreign = await registerDevice(r, randomUUID(), { externalId: "user-1" });
    const { devices } = await r.client.lookupDevices({
      appId,
      deviceIds: [anonymous.id.toUpperCase(), randomUUID(), foreign.id, withUser.id, anonymous.id],
    });
    expect(devices.map(({ id, externalId, platform }) => ({ id, externalId, platform }))).toEqual([
      { id: anonymous.id, externalId: "", platform: Platform.ANDROID },
      { id: withUser.id, externalId: "user-1", platform: Platform.IOS },
    ]);
    expect((await r.client.lookupDevices({ appId, deviceIds: [] })).devices).toEqual([]);
  });

  it("takes 1,000 ids and refuses more, a non-UUID id and a bad app id", async () => {
    const appId = randomUUID();
    const device = await registerDevice(r, appId);
    const many = [...Array.from({ length: 999 }, () => randomUUID()), device.id];
    expect((await r.client.lookupDevices({ appId, deviceIds: many })).devices.map((d) => d.id)).toEqual([device.id]);

    const tooMany = await rpcError(r.client.lookupDevices({ appId, deviceIds: [...many, randomUUID()] }));
    expect(tooMany.code).toBe(Code.InvalidArgument);
    expect(tooMany.rawMessage).toMatch(/at most 1000/);
    const notUuid = await rpcError(r.client.lookupDevices({ appId, deviceIds: [device.id, "not-a-uuid"] }));
    expect(notUuid.code).toBe(Code.InvalidArgument);
    expect(notUuid.rawMessage).toBe("device_ids[1] must be a device id");
    const badApp = await rpcError(r.client.lookupDevices({ appId: "x", deviceIds: [device.id] }));
    expect(badApp.code).toBe(Code.InvalidArgument);
  });
});

describe("EraseUser", () => {
  /** The registry's tables that have a device_id column (found, not listed, so a new one is covered). */
  async function deviceIdTables(): Promise<string[]> {
    const { rows } = await r.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
       WHERE table_schema = $1 AND column_name = 'device_id' ORDER BY table_name`,
      [r.schema],
    );
    return rows.map((row) => row.table_name);
  }

  /** Rows naming any of the devices, per table (devices by id, every other table by device_id). */
  async function rowsNaming(ids: string[]): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const count = async (sql: string) => Number((await r.pool.query<{ n: string }>(sql, [ids])).rows[0]!.n);
    out.devices = await count("SELECT count(*) AS n FROM devices WHERE id = ANY($1::uuid[])");
    for (const table of await deviceIdTables()) {
      out[table] = await count(`SELECT count(*) AS n FROM ${table} WHERE device_id = ANY($1::uuid[])`);
    }
    return out;
  }

  const sumOf = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

  it("deletes the user's devices and every registry row about them, announces user.erased, and a repeat does nothing", async () => {
    const appId = randomUUID();
    const erased = [
      await registerDevice(r, appId, { externalId: "erase-me" }),
      await registerDevice(r, appId, { externalId: "erase-me", platform: Platform.ANDROID }),
      await registerDevice(r, appId, { externalId: "erase-me" }),
    ];
    await r.client.setOptIn({ id: erased[2]!.id, optedIn: false });
    const kept = await registerDevice(r, appId, { externalId: "keep-me" });
    const anonymous = await registerDevice(r, appId);
    const otherApp = await registerDevice(r, randomUUID(), { externalId: "erase-me" });

    // In-app message state: two messages seen by the first device, one by the second, one by a kept device.
    const message = async (
      name: string,
      audience: MessageInitShape<typeof InAppAudienceSchema>["target"] = { case: "all", value: {} },
      app = appId,
    ) =>
      (
        await r.inApp.createInAppMessage({
          appId: app,
          settings: {
            name,
            contents: { entries: { en: { title: name, body: `${name} body` } } },
            audience: { target: audience },
          },
        })
      ).message!.id;
    const [welcome, promo] = [await message("Welcome"), await message("Promo")];
    // In-app audiences naming the external id: with another user, alone, not at all, and in another app.
    const named = (...externalIds: string[]) => ({ case: "externalIds" as const, value: { externalIds } });
    const withOther = await message("With other", named("keep-me", "erase-me"));
    const alone = await message("Alone", named("erase-me"));
    const notNamed = await message("Not named", named("keep-me"));
    const foreignApp = randomUUID();
    const foreign = await message("Foreign", named("erase-me"), foreignApp);
    const audienceOf = async (id: string, app = appId) =>
      (await r.inApp.getInAppMessage({ appId: app, id })).message!.audience!.target;
    const record = (deviceId: string, messageId: string, type: InAppEventType) =>
      r.inApp.recordInAppMessageEvent({ deviceId, messageId, type });
    await record(erased[0]!.id, welcome, InAppEventType.IMPRESSION);
    await record(erased[0]!.id, promo, InAppEventType.DISMISS);
    await record(erased[1]!.id, welcome, InAppEventType.CLICK);
    await record(kept.id, welcome, InAppEventType.IMPRESSION);

    const ids = erased.map((d) => d.id);
    expect(await deviceIdTables()).toContain("in_app_message_devices");
    const before = await rowsNaming(ids);
    expect(before).toMatchObject({ devices: 3, in_app_message_devices: 3 });

    const answer = await r.client.eraseUser({
      appId,
      externalId: "erase-me",
      receipts: 7n,
      engagements: 2n,
      campaignAudiences: 4n,
    });
    expect(answer).toMatchObject({ devices: 3n, inAppStates: 3n, inAppAudiences: 2n });
    expect(await audienceOf(withOther)).toMatchObject(named("keep-me"));
    expect(await audienceOf(alone)).toMatchObject(named());
    expect(await audienceOf(notNamed)).toMatchObject(named("keep-me"));
    expect(await audienceOf(foreign, foreignApp)).toMatchObject(named("erase-me"));
    const { rows: naming } = await r.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM in_app_messages WHERE app_id = $1 AND 'erase-me' = ANY (external_ids)",
      [appId],
    );
    expect(naming[0]!.n).toBe(0);
    expect(await rowsNaming(ids)).toEqual(Object.fromEntries(Object.keys(before).map((t) => [t, 0])));
    const err = await rpcError(r.client.getDevice({ id: ids[0]! }));
    expect(err.code).toBe(Code.NotFound);
    // Nobody else's: the other user, the anonymous device, the same external id in another app.
    expect(sumOf(await rowsNaming([kept.id, anonymous.id, otherApp.id]))).toBe(4);

    const events = await waitForEvents(r, (es) => es.some((e) => e.type === "user.erased" && e.appId === appId));
    const event = events.find((e) => e.type === "user.erased" && e.appId === appId)!;
    expect(event.msgId).toBe(event.id);
    expect(event.id).toMatch(EVENT_ID);
    expect(event.id).toMatch(/^user\.erased\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(event.data).toEqual({
      app_id: appId,
      external_id: "erase-me",
      devices: 3,
      receipts: 7,
      engagements: 2,
      in_app_states: 3,
      audiences: 6,
    });

    // A repeat (the caller found nothing left either) answers zeros and announces nothing.
    const repeat = await r.client.eraseUser({ appId, externalId: "erase-me" });
    expect(repeat).toMatchObject({ devices: 0n, inAppStates: 0n, inAppAudiences: 0n });
    const all = await afterSentinel(r);
    expect(all.filter((e) => e.type === "user.erased" && e.appId === appId)).toHaveLength(1);
  });

  it("announces an erasure of receipts or engagement the caller made even when the registry had no device", async () => {
    const appId = randomUUID();
    const answer = await r.client.eraseUser({ appId: appId.toUpperCase(), externalId: "gone-user", receipts: 4n });
    expect(answer).toMatchObject({ devices: 0n, inAppStates: 0n });
    const events = await waitForEvents(r, (es) => es.some((e) => e.data.external_id === "gone-user"));
    const event = events.find((e) => e.data.external_id === "gone-user")!;
    expect(event.appId).toBe(appId);
    expect(event.data).toEqual({
      app_id: appId,
      external_id: "gone-user",
      devices: 0,
      receipts: 4,
      engagements: 0,
      in_app_states: 0,
      audiences: 0,
    });
  });

  it("removes the external id from in-app audiences and announces it when no device has it any more", async () => {
    const appId = randomUUID();
    const { message } = await r.inApp.createInAppMessage({
      appId,
      settings: {
        name: "Targeted",
        contents: { entries: { en: { title: "t", body: "b" } } },
        audience: { target: { case: "externalIds", value: { externalIds: ["no-device", "other"] } } },
      },
    });
    const answer = await r.client.eraseUser({ appId, externalId: "no-device" });
    expect(answer).toMatchObject({ devices: 0n, inAppStates: 0n, inAppAudiences: 1n });
    expect((await r.inApp.getInAppMessage({ appId, id: message!.id })).message!.audience!.target).toMatchObject({
      case: "externalIds",
      value: { externalIds: ["other"] },
    });
    const mine = (e: { appId: string; type: string }) => e.appId === appId && e.type === "user.erased";
    const events = await waitForEvents(r, (es) => es.some(mine));
    expect(events.find(mine)!.data).toEqual({
      app_id: appId,
      external_id: "no-device",
      devices: 0,
      receipts: 0,
      engagements: 0,
      in_app_states: 0,
      audiences: 1,
    });
    expect(await r.client.eraseUser({ appId, externalId: "no-device" })).toMatchObject({ inAppAudiences: 0n });
    const all = await afterSentinel(r);
    expect(all.filter(mine)).toHaveLength(1);
  });

  it("refuses a bad app id and an empty, too long or control-character external id", async () => {
    const appId = randomUUID();
    const device = await registerDevice(r, appId, { externalId: "x" });
    for (const [badApp, externalId] of [
      ["nope", "x"],
      [appId, ""],
      [appId, "a".repeat(256)],
      [appId, "x\u0000"],
    ] as const) {
      const err = await rpcError(r.client.eraseUser({ appId: badApp, externalId }));
      expect(err.code).toBe(Code.InvalidArgument);
    }
    expect((await r.client.getDevice({ id: device.id })).device?.id).toBe(device.id);
  });
});
