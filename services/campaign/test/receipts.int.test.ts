import { randomUUID } from "node:crypto";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { beforeAll, describe, expect, it } from "vitest";
import { type CampaignTargetSchema, CampaignStatus, type Delivery } from "@herald/proto/campaign";
import { Platform } from "@herald/proto/common";
import { OutcomeKind } from "@herald/proto/delivery";
import { WebhookEventSchema } from "@herald/proto/webhook";
import { createLogger, webhooksStreamConfig, ensureStream } from "@herald/runtime";
import { ReceiptRetention } from "../src/receipt-retention.js";
import { ReceiptStore } from "../src/receipt-store.js";
import { type SeededDevice, type CampaignClient, useStack, PLATFORM_OF, MIXED_OUTCOMES, waitFor } from "./harness.js";

/** A mixed outcome per device, from its id. */
const kindOf = (deviceId: string) => MIXED_OUTCOMES[Number.parseInt(deviceId.slice(-4), 16) % MIXED_OUTCOMES.length]!;

describe("per-device receipts and campaign webhook events", () => {
  const stack = useStack();
  let campaigns: CampaignClient;

  beforeAll(async () => {
    campaigns = (await stack.startInstance({ FANOUT_BATCH_SIZE: "40" })).client;
    await ensureStream(stack.nc, webhooksStreamConfig(stack.names), createLogger("test", "silent"));
  });

  /** Every webhook event of the app in the WEBHOOKS stream so far. */
  async function webhookEvents(appId: string) {
    const durable = `test-${randomUUID()}`;
    await stack.jsm.consumers.add(stack.names.webhooksStream, {
      durable_name: durable,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = await stack.js.consumers.get(stack.names.webhooksStream, durable);
    const events: { id: string; type: string; data: Record<string, unknown> }[] = [];
    for (
      let pending = (await consumer.info()).num_pending;
      pending > 0;
      pending = (await consumer.info()).num_pending
    ) {
      for await (const m of await consumer.fetch({ max_messages: pending, expires: 2_000 })) {
        const e = fromBinary(WebhookEventSchema, m.data);
        if (e.appId === appId) events.push({ id: e.id, type: e.type, data: JSON.parse(e.dataJson) });
      }
    }
    await stack.jsm.consumers.delete(stack.names.webhooksStream, durable);
    return events;
  }

  async function sendAndAnswer(appId: string, devices: SeededDevice[]) {
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "receipts",
      contents: { en: { title: "t", body: "b" } },
      target: { target: { case: "all", value: {} } },
    });
    const id = campaign!.id;
    await waitFor(async () => (await stack.row(id)).fanout_done, 15_000, "fan-out");
    const batches = (await stack.takeBatches()).filter((b) => b.batch.campaignId === id);
    expect(batches.reduce((n, b) => n + b.batch.targets.length, 0)).toBe(devices.length);
    await stack.answer(batches, kindOf);
    // The same batches again under other message ids: JetStream keeps them, the store must not count them.
    await stack.answer(batches, kindOf, ".again");
    await waitFor(() => stack.outcomesSettled(), 15_000, "outcomes consumed");
    return id;
  }

  it("stores one receipt per device, exact under redelivery; lists, filters, pages, exports; announces started, completed and failed/bounced", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, [
      ...Array.from({ length: 130 }, () => ({ platform: "ios" as const, externalId: "u" })),
      ...Array.from({ length: 90 }, () => ({ platform: "android" as const })),
      ...Array.from({ length: 50 }, () => ({ platform: "web" as const })),
    ]);
    const id = await sendAndAnswer(appId, devices);
    const expected = new Map(devices.map((d) => [d.id, { kind: kindOf(d.id), platform: PLATFORM_OF[d.platform] }]));
    const count = (k: OutcomeKind) => [...expected.values()].filter((e) => e.kind === k).length;

    const { campaign } = await campaigns.getCampaign({ id });
    expect(campaign!.status).toBe(CampaignStatus.COMPLETED);
    expect(campaign!.stats).toMatchObject({
      sent: BigInt(devices.length),
      delivered: BigInt(count(OutcomeKind.DELIVERED)),
      failed: BigInt(count(OutcomeKind.FAILED)),
      bounced: BigInt(count(OutcomeKind.BOUNCED)),
      throttled: BigInt(count(OutcomeKind.THROTTLED)),
    });

    // Pages of 33 cover every device exactly once, in a stable order.
    const seen: Delivery[] = [];
    for (let page = 1; ; page++) {
      const r = await campaigns.listDeliveries({ campaignId: id, page: { page, perPage: 33 } });
      expect(Number(r.page!.total)).toBe(devices.length);
      if (r.deliveries.length === 0) break;
      seen.push(...r.deliveries);
    }
    expect(seen.length).toBe(devices.length);
    expect(new Set(seen.map((d) => d.deviceId)).size).toBe(devices.length);
    for (const d of seen) {
      expect(d.campaignId).toBe(id);
      expect({ kind: d.outcome, platform: d.platform }).toEqual(expected.get(d.deviceId));
      expect(d.reason).toBe(d.outcome === OutcomeKind.DELIVERED ? "" : "Test");
      expect(d.attempts).toBe(1);
      expect(d.at).toBeDefined();
    }

    // Filters, and a page that starts inside a later batch.
    const failed = await campaigns.listDeliveries({
      campaignId: id,
      outcome: OutcomeKind.FAILED,
      page: { page: 2, perPage: 7 },
    });
    expect(Number(failed.page!.total)).toBe(count(OutcomeKind.FAILED));
    const allFailed = seen.filter((d) => d.outcome === OutcomeKind.FAILED).map((d) => d.deviceId);
    expect(failed.deliveries.map((d) => d.deviceId)).toEqual(allFailed.slice(7, 14));
    const android = await campaigns.listDeliveries({
      campaignId: id,
      platform: Platform.ANDROID,
      page: { perPage: 200 },
    });
    expect(Number(android.page!.total)).toBe(90);
    expect(android.deliveries.every((d) => d.platform === Platform.ANDROID)).toBe(true);
    const past = await campaigns.listDeliveries({ campaignId: id, page: { page: 100, perPage: 200 } });
    expect(past.deliveries).toEqual([]);
    expect(Number(past.page!.total)).toBe(devices.length);
    await expect(campaigns.listDeliveries({ campaignId: id, outcome: 9 as OutcomeKind })).rejects.toThrow(/outcome/);

    // The export streams the same receipts in the same order.
    const exported: Delivery[] = [];
    for await (const chunk of campaigns.exportDeliveries({ campaignId: id })) {
      expect(chunk.deliveries.length).toBeLessThanOrEqual(1000);
      exported.push(...chunk.deliveries);
    }
    expect(exported.map((d) => d.deviceId)).toEqual(seen.map((d) => d.deviceId));
    // Asked for columns (today's gateway): the same receipts, in the same order, as columns.
    const columns: {
      deviceId: string;
      platform: number;
      outcome: number;
      reason: string;
      attempts: number;
      at: number;
    }[] = [];
    for await (const chunk of campaigns.exportDeliveries({ campaignId: id, columns: true })) {
      expect(chunk.deliveries).toEqual([]);
      const c = chunk.columns!;
      expect(c.deviceIds.length).toBeLessThanOrEqual(1000);
      for (const [i, deviceId] of c.deviceIds.entries()) {
        columns.push({
          deviceId,
          platform: c.platforms[i]!,
          outcome: c.outcomes[i]!,
          reason: c.reasons[i]!,
          attempts: c.attempts[i]!,
          at: c.recordedAtMs[i]!,
        });
      }
    }
    expect(columns).toEqual(
      exported.map((d) => ({
        deviceId: d.deviceId,
        platform: d.platform,
        outcome: d.outcome,
        reason: d.reason,
        attempts: d.attempts,
        at: timestampMs(d.at!),
      })),
    );
    const bouncedWeb: string[] = [];
    for await (const chunk of campaigns.exportDeliveries({
      campaignId: id,
      outcome: OutcomeKind.BOUNCED,
      platform: Platform.WEB,
    })) {
      bouncedWeb.push(...chunk.deliveries.map((d) => d.deviceId));
    }
    expect(bouncedWeb.sort()).toEqual(
      devices
        .filter((d) => d.platform === "web" && kindOf(d.id) === OutcomeKind.BOUNCED)
        .map((d) => d.id)
        .sort(),
    );

    // A device's receipts; another app sees none of them.
    const one = devices[5]!;
    const mine = await campaigns.listDeviceDeliveries({ appId, deviceId: one.id });
    expect(mine.deliveries).toHaveLength(1);
    expect(mine.deliveries[0]).toMatchObject({ campaignId: id, deviceId: one.id, outcome: kindOf(one.id) });
    expect((await campaigns.listDeviceDeliveries({ appId: randomUUID(), deviceId: one.id })).deliveries).toEqual([]);

    // Webhook events: started, completed with the stats, and every failed/bounced device once.
    const events = await waitFor(
      async () => {
        const all = await webhookEvents(appId);
        return all.some((e) => e.type === "campaign.completed") ? all : undefined;
      },
      15_000,
      "campaign.completed published",
    );
    expect(events.filter((e) => e.type === "campaign.started").map((e) => e.id)).toEqual([`campaign.started.${id}`]);
    const completed = events.filter((e) => e.type === "campaign.completed");
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data).toMatchObject({
      campaign_id: id,
      app_id: appId,
      audience_size: devices.length,
      stats: { sent: devices.length, failed: count(OutcomeKind.FAILED), bounced: count(OutcomeKind.BOUNCED) },
    });
    for (const [type, kind] of [
      ["deliveries.failed", OutcomeKind.FAILED],
      ["deliveries.bounced", OutcomeKind.BOUNCED],
    ] as const) {
      const items = events
        .filter((e) => e.type === type)
        .flatMap((e) => e.data.deliveries as { device_id: string; platform: string; reason: string }[]);
      expect(items.map((i) => i.device_id).sort()).toEqual(
        devices
          .filter((d) => kindOf(d.id) === kind)
          .map((d) => d.id)
          .sort(),
      );
      expect(items.every((i) => i.reason === "Test" && ["ios", "android", "web"].includes(i.platform))).toBe(true);
    }
    // Ids are unique: one event per batch and type (the redelivered copies wrote none).
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it("erases a user's devices from every receipt and engagement row, keeps stats, and answers zeros on repeat", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(
      appId,
      Array.from({ length: 120 }, () => ({ platform: "ios" as const })),
    );
    const id = await sendAndAnswer(appId, devices);
    const erased = [devices[0]!.id, devices[61]!.id, devices[119]!.id];
    await campaigns.recordEngagement({ appId, deviceId: erased[0]!, campaignId: id, kind: 1 });

    // Another app's call erases nothing of this one.
    expect(await campaigns.eraseDeviceRecords({ appId: randomUUID(), deviceIds: erased })).toMatchObject({
      receipts: 0n,
    });
    const first = await campaigns.eraseDeviceRecords({ appId, deviceIds: erased });
    expect(first).toMatchObject({ receipts: 3n, engagements: 1n });
    expect(await campaigns.eraseDeviceRecords({ appId, deviceIds: erased })).toMatchObject({
      receipts: 0n,
      engagements: 0n,
    });

    const { rows } = await stack.campaignPool.query(
      `SELECT (SELECT count(*)::int FROM receipt_batches WHERE device_ids && $1::uuid[]) AS receipts,
              (SELECT count(*)::int FROM engagement WHERE device_id = ANY ($1::uuid[])) AS engagement`,
      [erased],
    );
    expect(rows[0]).toEqual({ receipts: 0, engagement: 0 });
    const list = await campaigns.listDeliveries({ campaignId: id, page: { perPage: 200 } });
    expect(Number(list.page!.total)).toBe(117);
    expect(list.deliveries.map((d) => d.deviceId).sort()).toEqual(
      devices
        .filter((d) => !erased.includes(d.id))
        .map((d) => d.id)
        .sort(),
    );
    for (const d of erased)
      expect((await campaigns.listDeviceDeliveries({ appId, deviceId: d })).deliveries).toEqual([]);
    const { campaign } = await campaigns.getCampaign({ id });
    expect(campaign!.stats!.sent).toBe(120n);
    await expect(campaigns.eraseDeviceRecords({ appId, deviceIds: ["nope"] })).rejects.toThrow(/UUID/);
  });

  it("removes an erased external id from the app's campaign targets, without device ids, and answers 0 on repeat", async () => {
    const appId = randomUUID();
    const otherApp = randomUUID();
    const erased = `erase-me é ${randomUUID().slice(0, 8)}`;
    const create = async (app: string, target: MessageInitShape<typeof CampaignTargetSchema>["target"]) =>
      (
        await campaigns.createCampaign({
          appId: app,
          name: "audience",
          contents: { en: { title: "t", body: "b" } },
          target: { target },
          scheduledAt: { seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 },
        })
      ).campaign!.id;
    const ids = (externalIds: string[]) => ({ case: "externalIds" as const, value: { externalIds } });
    const both = await create(appId, ids(["keep-me", erased]));
    const alone = await create(appId, ids([erased]));
    const others = await create(appId, ids(["keep-me"]));
    const all = await create(appId, { case: "all", value: {} });
    const foreign = await create(otherApp, ids([erased]));
    const targetOf = async (id: string) => (await campaigns.getCampaign({ id })).campaign!.target!.target;

    const first = await campaigns.eraseDeviceRecords({ appId, deviceIds: [], externalId: erased });
    expect(first).toMatchObject({ receipts: 0n, engagements: 0n, audiences: 2n });
    expect(await targetOf(both)).toMatchObject(ids(["keep-me"]));
    // Left with no id, the campaign reaches nobody; it keeps its kind.
    expect(await targetOf(alone)).toMatchObject(ids([]));
    expect(await targetOf(others)).toMatchObject(ids(["keep-me"]));
    expect((await targetOf(all))?.case).toBe("all");
    // Another app's campaign is not this erasure's.
    expect(await targetOf(foreign)).toMatchObject(ids([erased]));
    const { rows } = await stack.campaignPool.query(
      "SELECT count(*)::int AS n FROM campaigns WHERE app_id = $1 AND $2 = ANY (external_ids)",
      [appId, erased],
    );
    expect(rows[0].n).toBe(0);

    expect(await campaigns.eraseDeviceRecords({ appId, deviceIds: [], externalId: erased })).toMatchObject({
      audiences: 0n,
    });
    // No external id: nothing of the targets is touched.
    expect(await campaigns.eraseDeviceRecords({ appId: otherApp, deviceIds: [] })).toMatchObject({ audiences: 0n });
    expect(await targetOf(foreign)).toMatchObject(ids([erased]));
    for (const externalId of ["a".repeat(256), "x\u0000"]) {
      await expect(campaigns.eraseDeviceRecords({ appId: otherApp, deviceIds: [], externalId })).rejects.toThrow(
        /external_id must be at most 255 characters without control characters/,
      );
    }
    expect(await targetOf(foreign)).toMatchObject(ids([erased]));
  });

  it("prunes receipts past the retention period in small batches, and keeps the stats", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(
      appId,
      Array.from({ length: 60 }, () => ({ platform: "android" as const })),
    );
    const id = await sendAndAnswer(appId, devices);
    const store = new ReceiptStore(stack.campaignPool);
    const log = createLogger("retention", "silent");
    // Today nothing is old enough; 31 days from now everything is.
    expect(await new ReceiptRetention({ store, days: 30, log }).runOnce()).toEqual({ batches: 0, engagements: 0 });
    const later = () => new Date(Date.now() + 31 * 86_400_000);
    // While another replica prunes (holds the lock), this one leaves the rows to it.
    const other = await stack.campaignPool.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock(hashtext('herald.receipt_prune.' || current_schema()))");
      expect(await new ReceiptRetention({ store, days: 30, log, now: later }).runOnce()).toEqual({
        batches: 0,
        engagements: 0,
      });
      const { rows: kept } = await stack.campaignPool.query(
        "SELECT count(*)::int AS n FROM receipt_batches WHERE campaign_id = $1",
        [id],
      );
      expect(kept[0].n).toBeGreaterThanOrEqual(2);
    } finally {
      await other.query("COMMIT");
      other.release();
    }
    const pruned = await new ReceiptRetention({ store, days: 30, log, now: later }).runOnce();
    expect(pruned.batches).toBeGreaterThanOrEqual(2);
    const { rows } = await stack.campaignPool.query(
      "SELECT count(*)::int AS n FROM receipt_batches WHERE campaign_id = $1",
      [id],
    );
    expect(rows[0].n).toBe(0);
    const { campaign } = await campaigns.getCampaign({ id });
    expect(campaign!.stats!.sent).toBe(60n);
  });

  it("announces campaign.cancelled once", async () => {
    const appId = randomUUID();
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "later",
      contents: { en: { title: "t", body: "b" } },
      target: { target: { case: "all", value: {} } },
      scheduledAt: { seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 },
    });
    await campaigns.cancelCampaign({ id: campaign!.id });
    const events = await waitFor(
      async () => {
        const all = await webhookEvents(appId);
        return all.length > 0 ? all : undefined;
      },
      10_000,
      "campaign.cancelled published",
    );
    expect(events).toEqual([
      {
        id: `campaign.cancelled.${campaign!.id}`,
        type: "campaign.cancelled",
        data: expect.objectContaining({ campaign_id: campaign!.id, app_id: appId }),
      },
    ]);
  });
});
