import { randomUUID } from "node:crypto";
import { create as createMessage, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { AppDeletedSchema } from "@herald/proto/delivery";
import { InAppEventType, type InAppMessageSettingsSchema } from "@herald/proto/in_app_message";
import { toTimestamp } from "@herald/runtime";
import { jetstream } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { apnsToken } from "../../../test/support/device-tokens.js";
import { IN_APP_LIMITS } from "../src/in-app-message-checks.js";
import { rpcError, useRegistry, waitFor } from "./harness.js";

type Settings = MessageInitShape<typeof InAppMessageSettingsSchema>;

const r = useRegistry();

const ALL = { target: { case: "all", value: {} } } as const;
const en = (title: string) => ({ entries: { en: { title, body: `${title} body` } } });
const at = (ms: number) => ({ at: toTimestamp(new Date(Date.now() + ms)) });

async function create(appId: string, settings: Settings) {
  const withAudience = { audience: ALL, ...settings } as Settings;
  return (await r.inApp.createInAppMessage({ appId, settings: withAudience })).message!;
}

async function device(appId: string, fields: { language?: string; externalId?: string; tags?: string[] } = {}) {
  const { device } = await r.client.registerDevice({
    appId,
    platform: Platform.IOS,
    pushToken: apnsToken(),
    language: fields.language,
    externalId: fields.externalId,
    tags: fields.tags ? { tags: fields.tags } : undefined,
  });
  return device!.id;
}

const fetchIds = async (deviceId: string) =>
  (await r.inApp.listDeviceInAppMessages({ deviceId })).messages.map((m) => m.id);

const event = (deviceId: string, messageId: string, type: InAppEventType) =>
  r.inApp.recordInAppMessageEvent({ deviceId, messageId, type });

describe("in-app message settings", () => {
  it("creates, reads, lists newest first, updates and deletes", async () => {
    const appId = randomUUID();
    const first = await create(appId, {
      name: "Welcome",
      contents: { entries: { en: { title: "Hi", body: "Welcome" }, de: { title: "Hallo", body: "Willkommen" } } },
      imageUrl: "https://cdn.example/w.png",
      actionUrl: "http://example.com/start",
      startsAt: at(-60_000),
      endsAt: at(3_600_000),
      priority: 7,
      maxImpressions: 2,
    });
    expect(first).toMatchObject({
      appId,
      name: "Welcome",
      contents: { en: { title: "Hi", body: "Welcome" }, de: { title: "Hallo", body: "Willkommen" } },
      imageUrl: "https://cdn.example/w.png",
      actionUrl: "http://example.com/start",
      audience: ALL,
      priority: 7,
      maxImpressions: 2,
      stats: { impressions: 0n, clicks: 0n, dismissals: 0n, devices: 0n },
    });
    const second = await create(appId, { name: "Second", contents: en("Two") });
    expect(second.priority).toBe(0);
    expect([second.maxImpressions, second.startsAt, second.endsAt, second.imageUrl]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);

    expect((await r.inApp.getInAppMessage({ appId, id: first.id })).message).toEqual(first);
    const list = await r.inApp.listInAppMessages({ appId, page: { page: 1, perPage: 1 } });
    expect(list.messages.map((m) => m.id)).toEqual([second.id]);
    expect(list.page).toMatchObject({ page: 1, perPage: 1, total: 2n });

    const updated = (
      await r.inApp.updateInAppMessage({
        appId,
        id: first.id,
        settings: { name: "Renamed", imageUrl: "", startsAt: {}, maxImpressions: 0 },
      })
    ).message!;
    expect(updated.name).toBe("Renamed");
    expect([updated.imageUrl, updated.startsAt, updated.maxImpressions]).toEqual([undefined, undefined, undefined]);
    expect(updated.contents).toEqual(first.contents);
    expect(updated.endsAt).toEqual(first.endsAt);

    // Another app sees none of it.
    const other = randomUUID();
    expect((await rpcError(r.inApp.getInAppMessage({ appId: other, id: first.id }))).code).toBe(Code.NotFound);
    expect((await rpcError(r.inApp.deleteInAppMessage({ appId: other, id: first.id }))).code).toBe(Code.NotFound);
    await r.inApp.deleteInAppMessage({ appId, id: first.id });
    expect((await rpcError(r.inApp.getInAppMessage({ appId, id: first.id }))).code).toBe(Code.NotFound);
    expect((await rpcError(r.inApp.getInAppMessage({ appId, id: "nope" }))).code).toBe(Code.NotFound);
  });

  it("answers 422 without the en fallback or with an end not after the start, also against stored values", async () => {
    const appId = randomUUID();
    const noEn = await rpcError(
      r.inApp.createInAppMessage({
        appId,
        settings: { name: "x", audience: ALL, contents: { entries: { de: { title: "a", body: "b" } } } },
      }),
    );
    expect(noEn.code).toBe(Code.FailedPrecondition);
    expect(noEn.rawMessage).toBe('contents must include an "en" entry, the fallback language');
    const window = await rpcError(create(appId, { name: "x", contents: en("x"), startsAt: at(1000), endsAt: at(0) }));
    expect(window.code).toBe(Code.FailedPrecondition);

    const message = await create(appId, { name: "x", contents: en("x"), startsAt: at(3_600_000) });
    const before = await rpcError(
      r.inApp.updateInAppMessage({ appId, id: message.id, settings: { endsAt: at(60_000) } }),
    );
    expect(before.code).toBe(Code.FailedPrecondition);
    const missing = await rpcError(
      r.inApp.updateInAppMessage({
        appId,
        id: message.id,
        settings: { contents: { entries: { fr: { title: "a", body: "b" } } } },
      }),
    );
    expect(missing.code).toBe(Code.FailedPrecondition);
    const required = await rpcError(r.inApp.createInAppMessage({ appId, settings: { name: "x", audience: ALL } }));
    expect(required.code).toBe(Code.InvalidArgument);
  });

  it("targets only segments of the same app", async () => {
    const appId = randomUUID();
    const segment = (await r.client.createSegment({ appId, name: "vips", rule: { tagsAny: ["vip"] } })).segment!;
    const foreign = (await r.client.createSegment({ appId: randomUUID(), name: "x", rule: { tagsAny: ["vip"] } }))
      .segment!;
    const ok = await create(appId, {
      name: "x",
      contents: en("x"),
      audience: { target: { case: "segmentId", value: segment.id } },
    });
    expect(ok.audience?.target).toEqual({ case: "segmentId", value: segment.id });
    for (const id of [foreign.id, randomUUID()]) {
      const err = await rpcError(
        create(appId, { name: "x", contents: en("x"), audience: { target: { case: "segmentId", value: id } } }),
      );
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toBe("segment not found");
    }
  });

  it("refuses a message beyond the app's limit", async () => {
    const appId = randomUUID();
    await r.pool.query(
      `INSERT INTO in_app_messages (app_id, name, contents, audience_kind)
       SELECT $1, 'm' || i, '{"en":{"title":"t","body":"b"}}', 'all' FROM generate_series(1, $2) AS i`,
      [appId, IN_APP_LIMITS.perApp],
    );
    const err = await rpcError(create(appId, { name: "one too many", contents: en("x") }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toBe("an app has at most 1000 in-app messages");
  });
});

describe("the device fetch", () => {
  it("renders the device's language or en, and names which", async () => {
    const appId = randomUUID();
    const message = await create(appId, {
      name: "x",
      contents: { entries: { en: { title: "Hello", body: "World" }, de: { title: "Hallo", body: "Welt" } } },
    });
    const german = await device(appId, { language: "de-AT" });
    const japanese = await device(appId, { language: "ja" });
    const none = await device(appId);
    expect((await r.inApp.listDeviceInAppMessages({ deviceId: german })).messages).toEqual([
      expect.objectContaining({ id: message.id, language: "de", title: "Hallo", body: "Welt" }),
    ]);
    for (const id of [japanese, none]) {
      expect((await r.inApp.listDeviceInAppMessages({ deviceId: id })).messages).toEqual([
        expect.objectContaining({ id: message.id, language: "en", title: "Hello", body: "World" }),
      ]);
    }
    expect((await rpcError(r.inApp.listDeviceInAppMessages({ deviceId: randomUUID() }))).code).toBe(Code.NotFound);
  });

  it("includes the device by audience (all, segment rule, external id), opted out and invalid alike", async () => {
    const appId = randomUUID();
    const segment = (await r.client.createSegment({ appId, name: "vips", rule: { tagsAny: ["vip"] } })).segment!;
    const all = await create(appId, { name: "all", contents: en("all") });
    const vips = await create(appId, {
      name: "vips",
      contents: en("vips"),
      audience: { target: { case: "segmentId", value: segment.id } },
    });
    const users = await create(appId, {
      name: "users",
      contents: en("users"),
      audience: { target: { case: "externalIds", value: { externalIds: ["u1", "u2"] } } },
    });
    const vip = await device(appId, { tags: ["vip"], externalId: "u3" });
    const user = await device(appId, { externalId: "u2" });
    const nobody = await device(appId);
    expect(new Set(await fetchIds(vip))).toEqual(new Set([all.id, vips.id]));
    expect(new Set(await fetchIds(user))).toEqual(new Set([all.id, users.id]));
    expect(await fetchIds(nobody)).toEqual([all.id]);

    // In-app messages are not pushes: opting out or a dead token does not hide them.
    await r.client.setOptIn({ id: vip, optedIn: false });
    await r.pool.query("UPDATE devices SET invalid = true WHERE id = $1", [vip]);
    expect(new Set(await fetchIds(vip))).toEqual(new Set([all.id, vips.id]));

    // The rule is evaluated as the device is now; a deleted segment matches no device.
    await r.client.updateDevice({ id: vip, tags: { tags: [] } });
    expect(await fetchIds(vip)).toEqual([all.id]);
    await r.client.updateDevice({ id: vip, tags: { tags: ["vip"] } });
    await r.client.deleteSegment({ id: segment.id });
    expect(await fetchIds(vip)).toEqual([all.id]);
    expect((await rpcError(event(vip, vips.id, InAppEventType.IMPRESSION))).code).toBe(Code.NotFound);
  });

  it("returns active messages only, by priority then newest, at most 20", async () => {
    const appId = randomUUID();
    await create(appId, { name: "future", contents: en("future"), startsAt: at(3_600_000) });
    await create(appId, { name: "past", contents: en("past"), startsAt: at(-7_200_000), endsAt: at(-3_600_000) });
    const running = await create(appId, {
      name: "running",
      contents: en("r"),
      startsAt: at(-60_000),
      endsAt: at(60_000),
    });
    const low = await create(appId, { name: "low", contents: en("low") });
    const high = await create(appId, { name: "high", contents: en("high"), priority: 90 });
    const newer = await create(appId, { name: "newer", contents: en("newer") });
    const id = await device(appId);
    const fetched = (await r.inApp.listDeviceInAppMessages({ deviceId: id })).messages;
    expect(fetched.map((m) => m.id)).toEqual([high.id, newer.id, low.id, running.id]);
    expect(fetched[3]!.endsAt).toEqual(running.endsAt);

    for (let i = 0; i < IN_APP_LIMITS.perFetch; i++) await create(appId, { name: `m${i}`, contents: en(`m${i}`) });
    const page = await fetchIds(id);
    expect(page).toHaveLength(IN_APP_LIMITS.perFetch);
    expect(page[0]).toBe(high.id);
  });
});

describe("events", () => {
  it("count impressions up to the limit, then refuse them; clicks count; a dismissal hides the message once", async () => {
    const appId = randomUUID();
    const message = await create(appId, { name: "x", contents: en("x"), maxImpressions: 2 });
    const a = await device(appId);
    const b = await device(appId);

    await event(a, message.id, InAppEventType.IMPRESSION);
    await event(a, message.id, InAppEventType.CLICK);
    await event(a, message.id, InAppEventType.IMPRESSION);
    const over = await rpcError(event(a, message.id, InAppEventType.IMPRESSION));
    expect(over.code).toBe(Code.Aborted);
    expect(await fetchIds(a)).toEqual([]);
    // Clicks are not limited by impressions.
    await event(a, message.id, InAppEventType.CLICK);

    expect(await fetchIds(b)).toEqual([message.id]);
    await event(b, message.id, InAppEventType.IMPRESSION);
    await event(b, message.id, InAppEventType.DISMISS);
    await event(b, message.id, InAppEventType.DISMISS);
    expect(await fetchIds(b)).toEqual([]);

    const stats = (await r.inApp.getInAppMessage({ appId, id: message.id })).message!.stats;
    expect(stats).toMatchObject({ impressions: 3n, clicks: 2n, dismissals: 1n, devices: 2n });
    const { rows } = await r.pool.query(
      "SELECT device_id, impressions, clicked_at IS NOT NULL AS clicked, dismissed_at IS NOT NULL AS dismissed FROM in_app_message_devices WHERE message_id = $1 ORDER BY impressions DESC",
      [message.id],
    );
    expect(rows).toEqual([
      { device_id: a, impressions: 2, clicked: true, dismissed: false },
      { device_id: b, impressions: 1, clicked: false, dismissed: true },
    ]);
  });

  it("count each impression exactly once under concurrency, never beyond the limit", async () => {
    const appId = randomUUID();
    const message = await create(appId, { name: "x", contents: en("x"), maxImpressions: 3 });
    const id = await device(appId);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => event(id, message.id, InAppEventType.IMPRESSION)),
    );
    expect(results.filter((res) => res.status === "fulfilled")).toHaveLength(3);
    const stats = (await r.inApp.getInAppMessage({ appId, id: message.id })).message!.stats;
    expect(stats).toMatchObject({ impressions: 3n, devices: 1n });
  });

  it("are 404 for messages that do not apply to the device", async () => {
    const appId = randomUUID();
    const id = await device(appId, { externalId: "u1" });
    const elsewhere = await create(randomUUID(), { name: "x", contents: en("x") });
    const later = await create(appId, { name: "x", contents: en("x"), startsAt: at(3_600_000) });
    const others = await create(appId, {
      name: "x",
      contents: en("x"),
      audience: { target: { case: "externalIds", value: { externalIds: ["u2"] } } },
    });
    for (const messageId of [elsewhere.id, later.id, others.id, randomUUID(), "nope"]) {
      const err = await rpcError(event(id, messageId, InAppEventType.CLICK));
      expect(err.code, messageId).toBe(Code.NotFound);
    }
    expect((await rpcError(event(randomUUID(), later.id, InAppEventType.CLICK))).code).toBe(Code.NotFound);
    expect((await rpcError(event(id, others.id, InAppEventType.UNSPECIFIED))).code).toBe(Code.InvalidArgument);
    const { rows } = await r.pool.query("SELECT count(*)::int AS n FROM in_app_message_devices WHERE device_id = $1", [
      id,
    ]);
    expect(rows[0].n).toBe(0);
  });
});

describe("removal", () => {
  it("drops a device's rows with the device, and an app's messages with the app", async () => {
    const appId = randomUUID();
    const keptApp = randomUUID();
    const message = await create(appId, { name: "x", contents: en("x") });
    const kept = await create(keptApp, { name: "x", contents: en("x") });
    const gone = await device(appId);
    const stays = await device(appId);
    const elsewhere = await device(keptApp);
    for (const [d, m] of [
      [gone, message.id],
      [stays, message.id],
      [elsewhere, kept.id],
    ] as const) {
      await event(d, m, InAppEventType.IMPRESSION);
    }
    const rowsOf = async (column: "device_id" | "message_id", id: string) =>
      (
        await r.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM in_app_message_devices WHERE ${column} = $1`,
          [id],
        )
      ).rows[0]!.n;

    await r.client.deleteDevice({ id: gone });
    expect(await rowsOf("device_id", gone)).toBe(0);
    expect(await rowsOf("device_id", stays)).toBe(1);
    // The counters keep what happened.
    expect((await r.inApp.getInAppMessage({ appId, id: message.id })).message!.stats?.devices).toBe(2n);

    await jetstream(r.nc).publish(
      r.names.appDeleted,
      toBinary(AppDeletedSchema, createMessage(AppDeletedSchema, { appId })),
    );
    await waitFor(async () => (await r.inApp.listInAppMessages({ appId })).page?.total === 0n);
    expect(await rowsOf("message_id", message.id)).toBe(0);
    expect((await r.inApp.getInAppMessage({ appId: keptApp, id: kept.id })).message).toBeDefined();
    expect(await rowsOf("device_id", elsewhere)).toBe(1);
  });
});
