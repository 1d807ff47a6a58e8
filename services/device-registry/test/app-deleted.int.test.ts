import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { AppDeletedSchema } from "@herald/proto/delivery";
import { APP_DELETE_BATCH } from "@herald/runtime";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { APP_DELETED_DURABLE, LEGACY_APP_DELETED_DURABLE } from "../src/app-deleted-consumer.js";
import { tokenHash } from "../src/push-token.js";
import { type Registry, useRegistry, waitFor } from "./harness.js";

async function insertDevices(r: Registry, appId: string, count: number): Promise<void> {
  const tokens = Array.from({ length: count }, (_, i) => `tok-${appId}-${i}`);
  await r.pool.query(
    `INSERT INTO devices (app_id, platform, push_token, token_hash)
     SELECT $1, 'android', t.token, t.hash FROM unnest($2::text[], $3::bytea[]) AS t(token, hash)`,
    [appId, tokens, tokens.map(tokenHash)],
  );
}

const appDeleted = (appId: string) =>
  toBinary(AppDeletedSchema, create(AppDeletedSchema, { appId, deletedAt: timestampNow() }));

async function deviceCount(r: Registry, appId: string): Promise<number> {
  const { rows } = await r.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM devices WHERE app_id = $1", [
    appId,
  ]);
  return rows[0]!.n;
}

async function channelCount(r: Registry, appId: string): Promise<number> {
  const { rows } = await r.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM android_channels WHERE app_id = $1",
    [appId],
  );
  return rows[0]!.n;
}

describe("app.deleted", () => {
  const r = useRegistry();

  it("removes every device, segment and Android channel of the deleted app, devices in batches, and no other app's", async () => {
    const deleted = randomUUID();
    const kept = randomUUID();
    await insertDevices(r, deleted, APP_DELETE_BATCH * 2 + 17);
    await insertDevices(r, kept, 25);
    const doomed = (
      await r.client.createSegment({ appId: deleted, name: "all android", rule: { platforms: [Platform.ANDROID] } })
    ).segment!;
    const survivor = (
      await r.client.createSegment({ appId: kept, name: "all android", rule: { platforms: [Platform.ANDROID] } })
    ).segment!;
    for (const appId of [deleted, kept]) {
      await r.pool.query("INSERT INTO android_channels (app_id, id, name) VALUES ($1, 'news', 'News')", [appId]);
    }
    const js = jetstream(r.nc);

    // A malformed event is dropped and does not block the ones behind it.
    await js.publish(r.names.appDeleted, "not an AppDeleted");
    await js.publish(r.names.appDeleted, appDeleted(deleted));

    await waitFor(async () => (await deviceCount(r, deleted)) === 0);
    expect(await deviceCount(r, kept)).toBe(25);
    await waitFor(async () => (await r.client.listSegments({ appId: deleted })).page?.total === 0n);
    expect(await channelCount(r, deleted)).toBe(0);
    expect(await channelCount(r, kept)).toBe(1);
    await expect(r.client.getSegment({ id: doomed.id })).rejects.toMatchObject({ code: Code.NotFound });
    expect((await r.client.getSegment({ id: survivor.id })).segment?.previewCount).toBe(25n);

    const jsm = await jetstreamManager(r.nc);
    // Both messages settled: the bad one terminated, the good one acknowledged.
    await waitFor(async () => {
      const info = await jsm.consumers.info(r.names.eventsStream, r.names.consumer(APP_DELETED_DURABLE));
      return info.num_ack_pending === 0 && info.num_pending === 0;
    });
  });

  it("still reads the JSON form earlier releases published on their subject (for one release)", async () => {
    const appId = randomUUID();
    await insertDevices(r, appId, 3);
    await jetstream(r.nc).publish(
      r.names.legacyAppDeleted,
      JSON.stringify({ app_id: appId, deleted_at: new Date().toISOString() }),
    );
    await waitFor(async () => (await deviceCount(r, appId)) === 0);
  });

  it("keeps protobuf events off the subject an older release's durable reads", async () => {
    // A registry of the previous release pulls from LEGACY_APP_DELETED_DURABLE, filtered on
    // the legacy subject: during a rolling upgrade it must never be handed a protobuf event.
    const jsm = await jetstreamManager(r.nc);
    const legacy = await jsm.consumers.info(r.names.eventsStream, r.names.consumer(LEGACY_APP_DELETED_DURABLE));
    expect(legacy.config.filter_subject).toBe(r.names.legacyAppDeleted);
    const current = await jsm.consumers.info(r.names.eventsStream, r.names.consumer(APP_DELETED_DURABLE));
    expect(current.config.filter_subject).toBe(r.names.appDeleted);
    expect(r.names.appDeleted).not.toBe(r.names.legacyAppDeleted);
  });

  it("retries after a database failure", async () => {
    const appId = randomUUID();
    await insertDevices(r, appId, 10);
    const jsm = await jetstreamManager(r.nc);
    const consumer = r.names.consumer(APP_DELETED_DURABLE);
    // The consumer's statements fail while the table is away; the message is nak'ed, not lost.
    await r.pool.query("ALTER TABLE devices RENAME TO devices_away");
    try {
      const mark = r.logs.lines.length;
      const ack = await jetstream(r.nc).publish(r.names.appDeleted, appDeleted(appId));
      await waitFor(
        async () => (await jsm.consumers.info(r.names.eventsStream, consumer)).delivered.stream_seq >= ack.seq,
      );
      // Delivered is not yet failed: the consumer logs the failure just before it naks.
      await waitFor(async () =>
        r.logs.since(mark).includes("removing devices, segments, channels and in-app messages of deleted app failed"),
      );
    } finally {
      await r.pool.query("ALTER TABLE devices_away RENAME TO devices");
    }
    expect(await deviceCount(r, appId)).toBe(10);
    await waitFor(async () => (await deviceCount(r, appId)) === 0);
  });
});
