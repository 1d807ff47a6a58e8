import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import { DeviceInvalidatedSchema } from "@herald/proto/delivery";
import { EVENT_ID } from "@herald/runtime";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { apnsToken } from "../../../test/support/device-tokens.js";
import { PgDeviceStore } from "../src/device-store.js";
import { tokenHash } from "../src/push-token.js";
import { registerDevice, useRegistry } from "./harness.js";
import { afterSentinel, type StreamedEvent, waitForEvents, webhookEvents } from "./webhook-stream.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

describe("registry webhook events", () => {
  const r = useRegistry();

  const outboxRows = async () => Number((await r.pool.query("SELECT count(*) AS n FROM outbox")).rows[0].n);

  /** The checks every event passes: its id is the dedup id, well formed, of the app. */
  function checkEnvelope(e: StreamedEvent, appId: string) {
    expect(e.msgId).toBe(e.id);
    expect(e.id).toMatch(EVENT_ID);
    expect(e.appId).toBe(appId);
    expect(e.data.app_id).toBe(appId);
  }

  it("announces an actual opt-out and opt-in, and nothing for writes that leave opted_in as it was", async () => {
    const appId = randomUUID();
    const device = await registerDevice(r, appId, { externalId: "user-opt" });
    const before = Date.now();
    await r.client.setOptIn({ id: device.id, optedIn: true }); // already opted in
    await r.client.setOptIn({ id: device.id, optedIn: false });
    await r.client.setOptIn({ id: device.id, optedIn: false }); // already opted out
    await r.client.updateDevice({ id: device.id, language: "de" });
    await r.client.registerDevice({ appId, pushToken: device.pushToken, platform: Platform.IOS, timezone: "UTC" });
    await r.client.importDevices({
      appId,
      devices: [{ appId, pushToken: device.pushToken, platform: Platform.IOS, appVersion: "2.0" }],
    });
    expect((await r.client.getDevice({ id: device.id })).device?.optedIn).toBe(false);
    await r.client.setOptIn({ id: device.id, optedIn: true });

    const events = await waitForEvents(r, (es) =>
      es.some((e) => e.type === "device.opted_in" && e.data.device_id === device.id),
    );
    const mine = events.filter((e) => e.data.device_id === device.id);
    expect(mine.map((e) => e.type)).toEqual(["device.opted_out", "device.opted_in"]);
    for (const e of mine) {
      checkEnvelope(e, appId);
      expect(e.id).toMatch(new RegExp(`^${e.type.replace(".", "\\.")}\\.${UUID}$`));
      expect(e.data).toEqual({ device_id: device.id, app_id: appId, platform: "ios", external_id: "user-opt" });
      expect(e.timestamp.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    }
    expect(mine[0]!.id).not.toBe(mine[1]!.id);
    await expect.poll(outboxRows).toBe(0);
  });

  it("announces one opt-out for concurrent calls setting the same value", async () => {
    const devices = await Promise.all(Array.from({ length: 5 }, () => registerDevice(r, randomUUID())));
    await Promise.all(
      devices.flatMap((d) => Array.from({ length: 20 }, () => r.client.setOptIn({ id: d.id, optedIn: false }))),
    );
    const all = await afterSentinel(r);
    for (const d of devices) {
      expect(all.filter((e) => e.data.device_id === d.id).map((e) => e.type)).toEqual(["device.opted_out"]);
    }
  });

  it("gives external_id null and the platform's name for a device without an external id", async () => {
    const appId = randomUUID();
    const device = await registerDevice(r, appId, { platform: Platform.ANDROID });
    await r.client.setOptIn({ id: device.id, optedIn: false });
    const events = await waitForEvents(r, (es) => es.some((e) => e.data.device_id === device.id));
    const e = events.find((x) => x.data.device_id === device.id)!;
    expect(e.type).toBe("device.opted_out");
    expect(e.data).toEqual({ device_id: device.id, app_id: appId, platform: "android", external_id: null });
  });

  it("announces each device InvalidateDevices makes invalid, with the reason, once", async () => {
    const appId = randomUUID();
    // A batch, inserted registered an hour ago: every one of them becomes invalid.
    const tokens = Array.from({ length: 40 }, () => apnsToken());
    const { rows } = await r.pool.query<{ id: string }>(
      `INSERT INTO devices (app_id, platform, push_token, token_hash, external_id, registered_at)
       SELECT $1, 'ios', t.token, t.hash, 'batch-user', now() - interval '1 hour'
       FROM unnest($2::text[], $3::bytea[]) AS t(token, hash) RETURNING id`,
      [appId, tokens, tokens.map(tokenHash)],
    );
    const batch = rows.map((row) => row.id);
    const revived = await registerDevice(r, appId);
    await sleep(5);
    const observedAt = new Date();
    await sleep(5);
    // Registered again after the provider's observation: the registration wins, nothing to announce.
    await r.client.registerDevice({ appId, pushToken: revived.pushToken, platform: Platform.IOS });

    const entry = (deviceId: string, at: Date, reason: string) => ({
      deviceId,
      observedAt: timestampFromDate(at),
      reason,
    });
    const first = await r.client.invalidateDevices({
      invalidations: [...batch, revived.id].map((id) => entry(id, observedAt, "Unregistered")),
    });
    expect(first.invalidated).toBe(batch.length);
    // Already invalid: a later verdict on the same devices changes nothing and announces nothing.
    const later = new Date(observedAt.getTime() + 1_000);
    const again = await r.client.invalidateDevices({
      invalidations: batch.slice(0, 5).map((id) => entry(id, later, "BadDeviceToken")),
    });
    expect(again.invalidated).toBe(0);

    const events = (await afterSentinel(r)).filter((e) => e.type === "device.invalidated" && e.appId === appId);
    expect(events.map((e) => e.id).sort()).toEqual(
      batch.map((id) => `device.invalidated.${id}.${observedAt.getTime()}`).sort(),
    );
    for (const e of events) {
      checkEnvelope(e, appId);
      expect(e.data).toEqual({
        device_id: e.data.device_id,
        app_id: appId,
        platform: "ios",
        reason: "Unregistered",
        external_id: "batch-user",
      });
    }
    expect(events.some((e) => e.data.device_id === revived.id)).toBe(false);
    await expect.poll(outboxRows).toBe(0);
  });

  it("announces a device the device.invalidated consumer makes invalid, once for a repeated verdict", async () => {
    const appId = randomUUID();
    const device = await registerDevice(r, appId, { externalId: "user-dead", platform: Platform.ANDROID });
    await sleep(5);
    const observedAt = new Date();
    const verdict = (at: Date) =>
      toBinary(
        DeviceInvalidatedSchema,
        create(DeviceInvalidatedSchema, {
          deviceId: device.id,
          appId,
          platform: Platform.ANDROID,
          reason: "UNREGISTERED",
          observedAt: timestampFromDate(at),
        }),
      );
    const message = verdict(observedAt);
    const js = jetstream(r.nc);
    await js.publish(r.names.deviceInvalidated, message);
    const id = `device.invalidated.${device.id}.${observedAt.getTime()}`;
    const events = await waitForEvents(r, (es) => es.some((e) => e.id === id));
    const e = events.find((x) => x.id === id)!;
    checkEnvelope(e, appId);
    expect(e.type).toBe("device.invalidated");
    expect(e.data).toEqual({
      device_id: device.id,
      app_id: appId,
      platform: "android",
      reason: "UNREGISTERED",
      external_id: "user-dead",
    });

    // The same verdict again, and a later one: the device is already invalid.
    await js.publish(r.names.deviceInvalidated, message);
    await js.publish(r.names.deviceInvalidated, verdict(new Date(observedAt.getTime() + 1_000)));
    // The consumer applies in order; once the EVENTS consumer has nothing left, the sentinel
    // orders the outbox after both.
    await expect
      .poll(async () => {
        const info = await (await jetstreamManager(r.nc)).consumers.info(
          r.names.eventsStream,
          r.names.consumer("device-registry-invalidated"),
        );
        return info.num_pending + info.num_ack_pending;
      })
      .toBe(0);
    const all = await afterSentinel(r);
    expect(all.filter((x) => x.data.device_id === device.id).map((x) => x.id)).toEqual([id]);
  });

  it("loses nothing to a crash between the commit and the publish", async () => {
    const appId = randomUUID();
    const optedOut = await registerDevice(r, appId, { externalId: "user-crash" });
    const dead = await registerDevice(r, appId);
    await sleep(5);
    const observedAt = new Date();
    // The service is gone (its relay with it); the writes below commit as a process that
    // died right after its transactions would have left them: in the outbox, unpublished.
    await r.app.close();
    const store = new PgDeviceStore(r.pool);
    await store.setOptIn(optedOut.id, false);
    expect(await store.invalidate([{ deviceId: dead.id, observedAt, reason: "Unregistered" }])).toBe(1);
    await store.eraseUser({ appId, externalId: "nobody", receipts: 3, engagements: 0, campaignAudiences: 0 });
    const { rows } = await r.pool.query<{ msg_id: string }>("SELECT msg_id FROM outbox ORDER BY id");
    expect(rows).toHaveLength(3);
    const ids = rows.map((row) => row.msg_id);
    expect(ids[1]).toBe(`device.invalidated.${dead.id}.${observedAt.getTime()}`);
    const published = new Set((await webhookEvents(r)).map((e) => e.id));
    for (const id of ids) expect(published.has(id)).toBe(false);

    // A new process publishes them at start-up.
    await r.restart();
    const events = await waitForEvents(r, (es) => ids.every((id) => es.some((e) => e.id === id)));
    expect(events.filter((e) => ids.includes(e.id)).map((e) => e.type)).toEqual([
      "device.opted_out",
      "device.invalidated",
      "user.erased",
    ]);
    await expect.poll(outboxRows).toBe(0);
  });

  it("exposes the outbox gauges", async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${r.app.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/^herald_outbox_pending_events\{service="device-registry"\} 0$/m);
    expect(metrics).toMatch(/^herald_outbox_oldest_pending_seconds\{service="device-registry"\} 0$/m);
  });
});
