import { randomBytes, randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Platform } from "@herald/proto/common";
import { DeviceInvalidatedSchema } from "@herald/proto/delivery";
import { describe, expect, it } from "vitest";
import { INVALIDATION_BATCH } from "../src/device-invalidated-consumer.js";
import { tokenHash } from "../src/push-token.js";
import { useRegistry, waitFor } from "./harness.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("device.invalidated", () => {
  const r = useRegistry();
  const appId = randomUUID();

  const register = async () =>
    (await r.client.registerDevice({ appId, pushToken: randomBytes(32).toString("hex"), platform: Platform.IOS }))
      .device!;

  function event(deviceId: string, observedAt: Date, reason = "Unregistered"): Uint8Array {
    return toBinary(
      DeviceInvalidatedSchema,
      create(DeviceInvalidatedSchema, {
        deviceId,
        appId,
        platform: Platform.IOS,
        reason,
        observedAt: timestampFromDate(observedAt),
      }),
    );
  }

  async function invalidIds(ids: string[]): Promise<Set<string>> {
    const { rows } = await r.pool.query<{ id: string }>(
      "SELECT id FROM devices WHERE id = ANY($1::uuid[]) AND invalid",
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Every message published so far is settled: acked or terminated. */
  async function settled(): Promise<void> {
    const jsm = await jetstreamManager(r.nc);
    await waitFor(async () => {
      const info = await jsm.consumers.info(r.names.eventsStream, r.names.consumer("device-registry-invalidated"));
      return info.num_ack_pending === 0 && info.num_pending === 0;
    });
  }

  it("marks the devices invalid, except one registered again after the observation", async () => {
    const dead = await register();
    const revived = await register();
    await sleep(5);
    const observedAt = new Date();
    await sleep(5);
    // The app registers the token again after the provider saw it dead: the registration wins.
    await r.client.registerDevice({ appId, pushToken: revived.pushToken, platform: Platform.IOS });

    const js = jetstream(r.nc);
    await js.publish(r.names.deviceInvalidated, event(revived.id, observedAt));
    await js.publish(r.names.deviceInvalidated, event(dead.id, observedAt, "BadDeviceToken"));

    await waitFor(async () => (await r.client.getDevice({ id: dead.id })).device!.invalid);
    const { rows } = await r.pool.query("SELECT invalid_reason FROM devices WHERE id = $1", [dead.id]);
    expect(rows[0].invalid_reason).toBe("BadDeviceToken");
    await settled();
    expect((await r.client.getDevice({ id: revived.id })).device?.invalid).toBe(false);
  });

  it("drops undecodable and unusable messages without blocking the next one", async () => {
    const device = await register();
    await sleep(5);
    const js = jetstream(r.nc);
    await js.publish(r.names.deviceInvalidated, "not a protobuf");
    await js.publish(r.names.deviceInvalidated, new Uint8Array([0x0a, 0xff, 0xff]));
    await js.publish(r.names.deviceInvalidated, event("not-a-uuid", new Date()));
    await js.publish(
      r.names.deviceInvalidated,
      toBinary(DeviceInvalidatedSchema, create(DeviceInvalidatedSchema, { deviceId: device.id })),
    );
    await js.publish(r.names.deviceInvalidated, event(device.id, new Date()));

    await waitFor(async () => (await r.client.getDevice({ id: device.id })).device!.invalid);
    await settled();
  });

  it("applies a burst in batches and counts what it applied", async () => {
    const count = INVALIDATION_BATCH * 2 + 123;
    const tokens = Array.from({ length: count }, (_, i) => `burst-${appId}-${i}`);
    const { rows } = await r.pool.query<{ id: string }>(
      `INSERT INTO devices (app_id, platform, push_token, token_hash, registered_at)
       SELECT $1, 'android', t.token, t.hash, now() - interval '1 hour' FROM unnest($2::text[], $3::bytea[]) AS t(token, hash)
       RETURNING id`,
      [appId, tokens, tokens.map(tokenHash)],
    );
    const ids = rows.map((row) => row.id);
    const js = jetstream(r.nc);
    const observedAt = new Date();
    await Promise.all(ids.map((id) => js.publish(r.names.deviceInvalidated, event(id, observedAt, "UNREGISTERED"))));

    await waitFor(async () => (await invalidIds(ids)).size === count);
    await settled();
    const metrics = await (await fetch(`http://127.0.0.1:${r.app.adminPort}/metrics`)).text();
    const applied = /herald_device_invalidations_total\{source="event",service="device-registry"\} (\d+)/.exec(metrics);
    expect(Number(applied?.[1])).toBeGreaterThanOrEqual(count);
  });

  it("retries after a database failure", async () => {
    const device = await register();
    await sleep(5);
    const jsm = await jetstreamManager(r.nc);
    const consumer = r.names.consumer("device-registry-invalidated");
    // The statement fails while the table is away; the message is nak'ed, not lost.
    await r.pool.query("ALTER TABLE devices RENAME TO devices_away");
    try {
      const mark = r.logs.lines.length;
      const ack = await jetstream(r.nc).publish(r.names.deviceInvalidated, event(device.id, new Date()));
      await waitFor(
        async () => (await jsm.consumers.info(r.names.eventsStream, consumer)).delivered.stream_seq >= ack.seq,
      );
      // Delivered is not yet failed: the consumer logs the failure just before it naks.
      await waitFor(async () => r.logs.since(mark).includes("applying device.invalidated batch failed"));
    } finally {
      await r.pool.query("ALTER TABLE devices_away RENAME TO devices");
    }
    expect((await invalidIds([device.id])).size).toBe(0);
    await waitFor(async () => (await invalidIds([device.id])).size === 1);
  });
});
