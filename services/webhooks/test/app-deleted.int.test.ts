import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { AppDeletedSchema } from "@herald/proto/delivery";
import { APP_DELETE_BATCH, publishWebhookEvent } from "@herald/runtime";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../../../test/support/wait.js";
import { APP_DELETED_DURABLE } from "../src/app-deleted-consumer.js";
import { startReceiver, useWebhooks } from "./harness.js";

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const appDeleted = (appId: string) =>
  toBinary(AppDeletedSchema, create(AppDeletedSchema, { appId, deletedAt: timestampNow() }));

describe("app.deleted", () => {
  const svc = useWebhooks();
  let rx: Receiver;

  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
  });

  /** An app's rows in each table of the webhooks schema. */
  const rowsOf = async (appId: string) => {
    const { rows } = await svc.pool.query<{ endpoints: number; events: number; deliveries: number }>(
      `SELECT (SELECT count(*)::int FROM endpoints WHERE app_id = $1) AS endpoints,
              (SELECT count(*)::int FROM events WHERE app_id = $1) AS events,
              (SELECT count(*)::int FROM deliveries
               WHERE endpoint_id IN (SELECT id FROM endpoints WHERE app_id = $1)
                  OR event_id IN (SELECT id FROM events WHERE app_id = $1)) AS deliveries`,
      [appId],
    );
    return rows[0]!;
  };

  /** Two endpoints with a delivered event each, then `bulk` more events delivered to the first. */
  const seedApp = async (appId: string, bulk: number) => {
    const ids: string[] = [];
    for (const events of [["campaign.started"], ["campaign.started", "device.invalidated"]]) {
      ids.push((await svc.client.createWebhook({ appId, url: rx.url, events })).webhook!.id);
    }
    const eventId = `campaign.started.${randomUUID()}`;
    await publishWebhookEvent(svc.nc, svc.names, {
      id: eventId,
      type: "campaign.started",
      appId,
      timestamp: new Date(),
      data: { campaign_id: randomUUID(), app_id: appId, started_at: new Date().toISOString() },
    });
    // Both endpoints got it, and its attempts are recorded.
    const delivered = await poll(
      async () =>
        (
          await svc.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM deliveries WHERE event_id = $1 AND status = 'delivered'",
            [eventId],
          )
        ).rows[0]!.n,
      (n) => n === 2,
      15_000,
    );
    expect(delivered.value).toBe(2);
    await svc.pool.query(
      `WITH ev AS (
         INSERT INTO events (id, app_id, type, occurred_at, data)
         SELECT 'bulk.' || $1 || '.' || g, $1::uuid, 'device.invalidated', now(), '{}' FROM generate_series(1, $2) g
         RETURNING id
       )
       INSERT INTO deliveries (endpoint_id, event_id, status, attempts, delivered_at, response_status)
       SELECT $3, id, 'delivered', 1, now(), 204 FROM ev`,
      [appId, bulk, ids[0]],
    );
    return ids;
  };

  it("removes the deleted app's endpoints, events and deliveries in batches, and no other app's", async () => {
    const deleted = randomUUID();
    const kept = randomUUID();
    await seedApp(deleted, APP_DELETE_BATCH * 2 + 17);
    const keptIds = await seedApp(kept, 25);
    const before = await rowsOf(deleted);
    expect(before).toEqual({ endpoints: 2, events: APP_DELETE_BATCH * 2 + 18, deliveries: APP_DELETE_BATCH * 2 + 19 });
    const keptBefore = await rowsOf(kept);
    expect(keptBefore).toEqual({ endpoints: 2, events: 26, deliveries: 27 });

    const js = jetstream(svc.nc);
    // A malformed event is dropped and does not block the one behind it.
    await js.publish(svc.names.appDeleted, "not an AppDeleted");
    await js.publish(svc.names.appDeleted, appDeleted(deleted));

    const gone = await poll(
      () => rowsOf(deleted),
      (r) => r.endpoints + r.events + r.deliveries === 0,
      60_000,
    );
    expect(gone.value).toEqual({ endpoints: 0, events: 0, deliveries: 0 });
    expect(await rowsOf(kept)).toEqual(keptBefore);
    for (const id of keptIds) expect((await svc.client.getWebhook({ appId: kept, id })).webhook?.enabled).toBe(true);
    expect((await svc.client.listWebhooks({ appId: deleted })).webhooks).toEqual([]);

    // Idempotent: the same deletion again (a redelivery, a second publish) removes nothing
    // more and is acked; the consumer drains.
    await js.publish(svc.names.appDeleted, appDeleted(deleted));
    const jsm = await jetstreamManager(svc.nc);
    const drained = await poll(
      () => jsm.consumers.info(svc.names.eventsStream, svc.names.consumer(APP_DELETED_DURABLE)),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq >= 3,
      15_000,
    );
    expect(drained.held).toBe(true);
    expect(await rowsOf(kept)).toEqual(keptBefore);
    expect(await rowsOf(deleted)).toEqual({ endpoints: 0, events: 0, deliveries: 0 });
  });
});
