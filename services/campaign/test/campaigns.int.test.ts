import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { CampaignStatus, Priority } from "@herald/proto/campaign";
import { Platform } from "@herald/proto/common";
import { DeliveryBatchSchema, OutcomeKind } from "@herald/proto/delivery";
import { beforeAll, describe, expect, it } from "vitest";
import { type CampaignClient, useStack, PLATFORM_OF, MIXED_OUTCOMES, waitFor, targetsOf } from "./harness.js";

/** Receipts stored for a campaign (one array element per device). */
const RECEIPT_COUNT =
  "SELECT coalesce(sum(cardinality(device_ids)), 0)::int AS n FROM receipt_batches WHERE campaign_id = $1";

describe("campaigns", () => {
  const stack = useStack();
  let campaigns: CampaignClient;

  beforeAll(async () => {
    // Small pages and batches, so that batches span pages and platforms need several.
    campaigns = (await stack.startInstance({ FANOUT_PAGE_SIZE: "3", FANOUT_BATCH_SIZE: "4" })).client;
  });

  const contents = { en: { title: "Hello", body: "World" }, de: { title: "Hallo", body: "Welt" } };
  const fannedOut = (id: string) => waitFor(async () => (await stack.row(id)).fanout_done, 15_000, "fan-out");
  const completed = (id: string) =>
    waitFor(
      async () => {
        const { campaign } = await campaigns.getCampaign({ id });
        return campaign?.status === CampaignStatus.COMPLETED ? campaign : undefined;
      },
      15_000,
      "completion",
    );

  it("sends to all: every targetable device once, in its language, then completes with exact stats", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, [
      ...Array.from({ length: 10 }, () => ({ platform: "ios" as const, language: "en" })),
      ...Array.from({ length: 10 }, () => ({ platform: "android" as const, language: "de" })),
      ...Array.from({ length: 5 }, () => ({ platform: "web" as const, language: "fr" })),
      ...Array.from({ length: 3 }, () => ({ platform: "ios" as const, language: null })),
      ...Array.from({ length: 4 }, (_, i) => ({
        platform: (["ios", "android"] as const)[i % 2]!,
        language: "de",
        optedIn: false,
      })),
      ...Array.from({ length: 4 }, (_, i) => ({
        platform: (["web", "android"] as const)[i % 2]!,
        language: "en",
        invalid: true,
      })),
    ]);
    await stack.seed(randomUUID(), [
      { platform: "ios", language: "en" },
      { platform: "web", language: "de" },
    ]);
    const targetable = devices.filter((d) => d.targetable);

    const { campaign, created } = await campaigns.createCampaign({
      appId,
      name: "all",
      contents,
      dataJson: '{"action_url":"https://example.test/sale"}',
      target: { target: { case: "all", value: {} } },
      options: { ttlSeconds: 3600, priority: Priority.HIGH, collapseId: "sale" },
    });
    expect(created).toBe(true);
    expect([CampaignStatus.QUEUED, CampaignStatus.SENDING]).toContain(campaign!.status);
    await fannedOut(campaign!.id);
    const batches = (await stack.takeBatches()).filter((b) => b.batch.campaignId === campaign!.id);

    const got = targetsOf(batches);
    expect([...got.keys()].sort()).toEqual(targetable.map((d) => d.id).sort());
    for (const d of targetable) {
      const expected = d.language === "de" ? contents.de : contents.en;
      expect(got.get(d.id)).toMatchObject({ ...expected, platform: PLATFORM_OF[d.platform] });
    }
    expect(batches.map((b) => Number(b.batch.sequence)).sort((a, b) => a - b)).toEqual(batches.map((_, i) => i));
    for (const { batch, subject } of batches) {
      expect(subject).toBe(stack.names.delivery((["ios", "android", "web"] as const)[batch.platform - 1]!));
      expect(batch.targets.length).toBeGreaterThan(0);
      expect(batch.targets.length).toBeLessThanOrEqual(4);
      // Only the payloads its targets use.
      expect(new Set(batch.targets.map((t) => t.payloadIndex)).size).toBe(batch.payloads.length);
      expect(batch).toMatchObject({
        appId,
        dataJson: '{"action_url":"https://example.test/sale"}',
        ttlSeconds: 3600,
        highPriority: true,
        collapseId: "sale",
      });
    }

    const sending = (await campaigns.getCampaign({ id: campaign!.id })).campaign!;
    expect(sending.status).toBe(CampaignStatus.SENDING);
    expect(sending.audienceSize).toBe(BigInt(targetable.length));
    expect(sending.sentAt).toBeDefined();

    const kindOf = (id: string) => MIXED_OUTCOMES[targetable.findIndex((d) => d.id === id) % MIXED_OUTCOMES.length]!;
    await stack.answer(batches, kindOf);
    const done = await completed(campaign!.id);
    const count = (k: OutcomeKind) => BigInt(targetable.filter((d) => kindOf(d.id) === k).length);
    const expectedStats = {
      sent: BigInt(targetable.length),
      delivered: count(OutcomeKind.DELIVERED),
      failed: count(OutcomeKind.FAILED),
      bounced: count(OutcomeKind.BOUNCED),
      throttled: count(OutcomeKind.THROTTLED),
    };
    expect(done.stats).toMatchObject(expectedStats);
    expect(done.audienceSize).toBe(BigInt(targetable.length));
    expect(done.completedAt).toBeDefined();

    // A sender that crashed before its ack publishes the same outcomes again: nothing changes.
    await stack.answer(batches, kindOf, ".again");
    await waitFor(() => stack.outcomesSettled(), 10_000, "outcomes consumed");
    const stats = await campaigns.getCampaignStats({ id: campaign!.id });
    expect(stats.campaignId).toBe(campaign!.id);
    expect(stats.stats).toMatchObject(expectedStats);
  });

  it("drops undecodable outcome messages and outcomes of unknown campaigns, and keeps consuming", async () => {
    await stack.js.publish(stack.names.outcome(randomUUID()), new Uint8Array([0xff, 0xff, 0xff]));
    const unknown = randomUUID();
    await stack.answer([
      {
        subject: "",
        batch: create(DeliveryBatchSchema, {
          campaignId: unknown,
          platform: Platform.IOS,
          sequence: 0n,
          targets: [{ deviceId: randomUUID() }],
        }),
      },
    ]);
    await waitFor(() => stack.outcomesSettled(), 10_000, "outcomes consumed");
    const { rows } = await stack.campaignPool.query(RECEIPT_COUNT, [unknown]);
    expect(rows[0].n).toBe(0);
  });

  it("records every outcome message as it arrives, without waiting for more (well within the ack wait)", async () => {
    // Bursts of more messages than the consumer pulls ahead, each message with many
    // outcomes so that messages queue up while a group is written, each burst followed by
    // silence: the last messages of every burst must be recorded and acked without a next
    // message to push them along (a group held back waits out the 30 s ack wait).
    const appId = randomUUID();
    await stack.seed(appId, [{ platform: "ios" }]);
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "bursts",
      contents: { en: { title: "t", body: "b" } },
      target: { target: { case: "all", value: {} } },
    });
    await fannedOut(campaign!.id);
    let sequence = 0;
    const batchOf = () => ({
      subject: "",
      batch: create(DeliveryBatchSchema, {
        campaignId: campaign!.id,
        platform: Platform.IOS,
        sequence: BigInt(sequence++),
        targets: Array.from({ length: 100 }, () => ({ deviceId: randomUUID() })),
      }),
    });
    for (let burst = 0; burst < 3; burst++) {
      await stack.answer(Array.from({ length: 250 }, batchOf));
      await waitFor(() => stack.outcomesSettled(), 10_000, `burst ${burst + 1} consumed`);
    }
    const { rows } = await stack.campaignPool.query(RECEIPT_COUNT, [campaign!.id]);
    expect(rows[0].n).toBe(3 * 250 * 100);
  });

  it("sends to users: only the targetable devices of those external ids", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, [
      { platform: "ios", externalId: "u1", language: "de" },
      { platform: "web", externalId: "u1" },
      { platform: "android", externalId: "u2" },
      { platform: "android", externalId: "u3", optedIn: false },
      { platform: "ios", externalId: "u3" },
      { platform: "ios" },
    ]);
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "users",
      contents,
      target: { target: { case: "externalIds", value: { externalIds: ["u1", "u3", "u1", "nobody"] } } },
    });
    await fannedOut(campaign!.id);
    const batches = (await stack.takeBatches()).filter((b) => b.batch.campaignId === campaign!.id);
    const expected = devices.filter((d) => d.targetable && (d.externalId === "u1" || d.externalId === "u3"));
    const got = targetsOf(batches);
    expect([...got.keys()].sort()).toEqual(expected.map((d) => d.id).sort());
    expect(got.get(devices[0]!.id)?.title).toBe("Hallo");
    expect(got.get(devices[1]!.id)?.title).toBe("Hello");

    await stack.answer(batches);
    const done = await completed(campaign!.id);
    expect(done.audienceSize).toBe(3n);
    expect(done.stats).toMatchObject({ sent: 3n, delivered: 3n });
  });

  it("sends to device ids: exactly those targetable devices of the app, on every platform", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, [
      { platform: "ios", language: "de" },
      { platform: "android", externalId: "u1" },
      { platform: "web" },
      { platform: "ios", optedIn: false },
      { platform: "android", invalid: true },
      { platform: "ios", externalId: "u1" },
    ]);
    const [elsewhere] = await stack.seed(randomUUID(), [{ platform: "ios" }]);
    const chosen = [devices[0]!, devices[1]!, devices[2]!, devices[3]!, devices[4]!];
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "devices",
      contents,
      target: {
        target: {
          case: "deviceIds",
          value: { deviceIds: [...chosen.map((d) => d.id.toUpperCase()), elsewhere!.id, randomUUID()] },
        },
      },
    });
    expect(campaign!.target?.target).toMatchObject({ case: "deviceIds" });
    await fannedOut(campaign!.id);
    const batches = (await stack.takeBatches()).filter((b) => b.batch.campaignId === campaign!.id);
    const got = targetsOf(batches);
    // Not devices[5], though it shares devices[1]'s external id; not the other app's device.
    expect([...got.keys()].sort()).toEqual([devices[0]!.id, devices[1]!.id, devices[2]!.id].sort());
    expect(got.get(devices[0]!.id)?.title).toBe("Hallo");

    await stack.answer(batches);
    const done = await completed(campaign!.id);
    expect(done.audienceSize).toBe(3n);
    expect(done.stats).toMatchObject({ sent: 3n });
  });

  it("completes a campaign with no audience at once", async () => {
    const appId = randomUUID();
    await stack.seed(appId, [{ platform: "ios", externalId: "someone" }]);
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "nobody",
      contents,
      target: { target: { case: "externalIds", value: { externalIds: ["nobody"] } } },
    });
    const done = await completed(campaign!.id);
    expect(done.audienceSize).toBe(0n);
    expect(done.stats?.sent).toBe(0n);
    expect((await stack.takeBatches()).filter((b) => b.batch.campaignId === campaign!.id)).toEqual([]);
  });

  it("sends to a stored segment of the registry", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, [
      { platform: "ios", tags: ["vip"] },
      { platform: "web", tags: ["vip", "beta"] },
      { platform: "android", tags: ["beta"] },
      { platform: "android", tags: ["vip"], optedIn: false },
    ]);
    const { segment } = await stack.registry.createSegment({ appId, name: "VIPs", rule: { tagsAny: ["vip"] } });
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "segment",
      contents,
      target: { target: { case: "segment", value: { segmentId: segment!.id } } },
    });
    await fannedOut(campaign!.id);
    const batches = (await stack.takeBatches()).filter((b) => b.batch.campaignId === campaign!.id);
    expect([...targetsOf(batches).keys()].sort()).toEqual([devices[0]!.id, devices[1]!.id].sort());
    await stack.answer(batches);
    expect((await completed(campaign!.id)).audienceSize).toBe(2n);
  });

  it("fails a campaign whose segment is deleted before fan-out", async () => {
    const appId = randomUUID();
    await stack.seed(appId, [{ platform: "ios", tags: ["vip"] }]);
    const { segment } = await stack.registry.createSegment({ appId, name: "gone soon", rule: { tagsAny: ["vip"] } });
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "orphan",
      contents,
      target: { target: { case: "segment", value: { segmentId: segment!.id } } },
      scheduledAt: timestampFromDate(new Date(Date.now() + 1_000)),
    });
    await stack.registry.deleteSegment({ id: segment!.id });
    const failed = await waitFor(
      async () => {
        const { campaign: c } = await campaigns.getCampaign({ id: campaign!.id });
        return c?.status === CampaignStatus.FAILED ? c : undefined;
      },
      10_000,
      "failure",
    );
    expect(failed.failureReason).toBe("segment not found");
    expect(failed.audienceSize).toBe(0n);
    expect((await stack.takeBatches()).filter((b) => b.batch.campaignId === campaign!.id)).toEqual([]);
  });

  it("refuses an unknown segment with NOT_FOUND", async () => {
    const err = await campaigns
      .createCampaign({
        appId: randomUUID(),
        name: "x",
        contents,
        target: { target: { case: "segment", value: { segmentId: randomUUID() } } },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).rawMessage).toBe("segment not found");
  });

  it("maps validation failures to INVALID_ARGUMENT and FAILED_PRECONDITION", async () => {
    const base = { appId: randomUUID(), name: "x", target: { target: { case: "all" as const, value: {} } } };
    const noEn = await campaigns.createCampaign({ ...base, contents: { de: contents.de } }).catch((e: unknown) => e);
    expect((noEn as ConnectError).code).toBe(Code.FailedPrecondition);
    const badKey = await campaigns
      .createCampaign({ ...base, contents: { ...contents, english: contents.en } })
      .catch((e: unknown) => e);
    expect((badKey as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it("returns the first campaign for a repeated idempotency key", async () => {
    const appId = randomUUID();
    const request = {
      appId,
      contents,
      target: { target: { case: "all" as const, value: {} } },
      idempotencyKey: "order-42",
      idempotencyScope: "key-1",
    };
    const [a, b] = await Promise.all([
      campaigns.createCampaign({ ...request, name: "first" }),
      campaigns.createCampaign({ ...request, name: "second" }),
    ]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(a.campaign!.id).toBe(b.campaign!.id);
    const again = await campaigns.createCampaign({ ...request, name: "third" });
    expect(again).toMatchObject({ created: false, campaign: { id: a.campaign!.id } });
    const otherScope = await campaigns.createCampaign({ ...request, name: "other", idempotencyScope: "key-2" });
    expect(otherScope.created).toBe(true);
    expect(otherScope.campaign!.id).not.toBe(a.campaign!.id);
    const list = await campaigns.listCampaigns({ appId });
    expect(list.page?.total).toBe(2n);
    await stack.takeBatches();
  });

  it("lists an app's campaigns newest first, with paging", async () => {
    const appId = randomUUID();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { campaign } = await campaigns.createCampaign({
        appId,
        name: `c${i}`,
        contents,
        target: { target: { case: "all", value: {} } },
      });
      ids.push(campaign!.id);
    }
    const first = await campaigns.listCampaigns({ appId, page: { page: 1, perPage: 2 } });
    expect(first.campaigns.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.page).toMatchObject({ page: 1, perPage: 2, total: 3n });
    const second = await campaigns.listCampaigns({ appId, page: { page: 2, perPage: 2 } });
    expect(second.campaigns.map((c) => c.id)).toEqual([ids[0]]);
    expect((await campaigns.listCampaigns({ appId })).page).toMatchObject({ page: 1, perPage: 50, total: 3n });
    // The one paging rule: out of range is refused, not clamped.
    await expect(campaigns.listCampaigns({ appId, page: { page: 1, perPage: 201 } })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    expect((await campaigns.listCampaigns({ appId: randomUUID() })).campaigns).toEqual([]);
  });

  it("answers NOT_FOUND for unknown or malformed ids", async () => {
    for (const id of [randomUUID(), "nope"]) {
      // Called one at a time: a rejection must have its handler before it happens.
      for (const call of [
        () => campaigns.getCampaign({ id }),
        () => campaigns.getCampaignStats({ id }),
        () => campaigns.cancelCampaign({ id }),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect((err as ConnectError).code).toBe(Code.NotFound);
      }
    }
  });
});
