import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { CampaignStatus, EngagementKind } from "@herald/proto/campaign";
import { beforeAll, describe, expect, it } from "vitest";
import { type CampaignClient, useStack, waitFor } from "./harness.js";

/**
 * RecordEngagement: devices report that they showed or clicked a notification; each
 * (campaign, device, kind) counts once, a click counts as received too, and only sent
 * campaigns of the device's own app can be reported on.
 */
describe("engagement", () => {
  const stack = useStack();
  let campaigns: CampaignClient;

  beforeAll(async () => {
    campaigns = (await stack.startInstance()).client;
  });

  const contents = { en: { title: "Hello", body: "World" } };

  async function sentCampaign(appId: string, devices: number) {
    const seeded = await stack.seed(
      appId,
      Array.from({ length: devices }, () => ({ platform: "web" as const })),
    );
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "engage",
      contents,
      target: { target: { case: "all", value: {} } },
    });
    await waitFor(async () => (await stack.row(campaign!.id)).fanout_done, 15_000, "fan-out");
    await stack.answer(await stack.takeBatches());
    await waitFor(
      async () => (await campaigns.getCampaign({ id: campaign!.id })).campaign?.status === CampaignStatus.COMPLETED,
      15_000,
      "completion",
    );
    return { campaignId: campaign!.id, deviceIds: seeded.map((d) => d.id) };
  }

  const stats = async (id: string) => (await campaigns.getCampaignStats({ id })).stats!;

  it("counts each device once per kind, under concurrent and repeated reports", async () => {
    const appId = randomUUID();
    const { campaignId, deviceIds } = await sentCampaign(appId, 40);
    const report = (deviceId: string, kind: EngagementKind) =>
      campaigns.recordEngagement({ appId, deviceId, campaignId, kind });

    // Every device reports "received" three times at once; the first ten also click twice.
    const answers = await Promise.all(
      deviceIds.flatMap((id, i) => [
        ...[1, 2, 3].map(() => report(id, EngagementKind.RECEIVED)),
        ...(i < 10 ? [1, 2].map(() => report(id, EngagementKind.CLICKED)) : []),
      ]),
    );
    expect(answers.filter((a) => a.counted)).toHaveLength(40 + 10);
    const s = await stats(campaignId);
    expect(s.received).toBe(40n);
    expect(s.clicked).toBe(10n);
    // The delivery counters are untouched.
    expect(s.delivered).toBe(40n);
    expect(s.sent).toBe(40n);
  });

  it("counts a click without an earlier received report as received too", async () => {
    const appId = randomUUID();
    const { campaignId, deviceIds } = await sentCampaign(appId, 2);
    const first = await campaigns.recordEngagement({
      appId,
      deviceId: deviceIds[0]!,
      campaignId,
      kind: EngagementKind.CLICKED,
    });
    expect(first.counted).toBe(true);
    const later = await campaigns.recordEngagement({
      appId,
      deviceId: deviceIds[0]!,
      campaignId,
      kind: EngagementKind.RECEIVED,
    });
    expect(later.counted).toBe(false);
    const s = await stats(campaignId);
    expect([s.received, s.clicked]).toEqual([1n, 1n]);
  });

  it("refuses campaigns of another app, unsent campaigns and unknown ids with NOT_FOUND", async () => {
    const appId = randomUUID();
    const { campaignId, deviceIds } = await sentCampaign(appId, 1);
    const deviceId = deviceIds[0]!;
    const code = async (req: Parameters<typeof campaigns.recordEngagement>[0]) => {
      const err = await campaigns.recordEngagement(req).then(
        () => undefined,
        (e: unknown) => e,
      );
      return err instanceof ConnectError ? err.code : err;
    };
    const { campaign: scheduled } = await campaigns.createCampaign({
      appId,
      name: "later",
      contents,
      target: { target: { case: "all", value: {} } },
      scheduledAt: { seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 },
    });
    const kind = EngagementKind.RECEIVED;
    expect(await code({ appId: randomUUID(), deviceId, campaignId, kind })).toBe(Code.NotFound);
    expect(await code({ appId, deviceId, campaignId: scheduled!.id, kind })).toBe(Code.NotFound);
    expect(await code({ appId, deviceId, campaignId: randomUUID(), kind })).toBe(Code.NotFound);
    expect(await code({ appId, deviceId, campaignId: "nope", kind })).toBe(Code.NotFound);
    expect(await code({ appId, deviceId, campaignId, kind: EngagementKind.UNSPECIFIED })).toBe(Code.InvalidArgument);
    expect(await code({ appId, deviceId: "x", campaignId, kind })).toBe(Code.InvalidArgument);
    const s = await stats(campaignId);
    expect([s.received, s.clicked]).toEqual([0n, 0n]);
  });
});
