import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { CampaignStatus } from "@herald/proto/campaign";
import { ERROR_NAME_HEADER } from "@herald/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { poll } from "../../../test/support/wait.js";
import { type CampaignClient, targetsOf, useStack, waitFor } from "./harness.js";

describe("scheduling and cancelling", () => {
  const stack = useStack();
  let campaigns: CampaignClient;
  const appId = randomUUID();
  let deviceIds: string[];

  beforeAll(async () => {
    campaigns = (await stack.startInstance({ SCHEDULER_INTERVAL_MS: "200" })).client;
    deviceIds = (await stack.seed(appId, [{ platform: "ios" }, { platform: "android" }, { platform: "web" }])).map(
      (d) => d.id,
    );
  });

  const contents = { en: { title: "Later", body: "Soon" } };
  const all = { target: { case: "all" as const, value: {} } };
  const status = async (id: string) => (await campaigns.getCampaign({ id })).campaign!.status;

  it("keeps a scheduled campaign scheduled until its time, then fans it out", async () => {
    const at = new Date(Date.now() + 2_000);
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "later",
      contents,
      target: all,
      scheduledAt: timestampFromDate(at),
    });
    expect(campaign!.status).toBe(CampaignStatus.SCHEDULED);
    expect(campaign!.scheduledAt).toEqual(timestampFromDate(at));

    // Watched until shortly before it is due (time the test waits anyway): it stays scheduled.
    const early = await poll(
      () => status(campaign!.id),
      (s) => s !== CampaignStatus.SCHEDULED || Date.now() > at.getTime() - 300,
      3_000,
      50,
    );
    expect(early.value).toBe(CampaignStatus.SCHEDULED);
    expect((await stack.takeBatches()).length).toBe(0);

    await waitFor(async () => (await stack.row(campaign!.id)).fanout_done, 10_000, "fan-out");
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime());
    const batches = await stack.takeBatches();
    expect([...targetsOf(batches).keys()].sort()).toEqual([...deviceIds].sort());
    // The providers' ttl counts from when the campaign was due, not from when it was stored.
    expect(batches[0]!.batch.createdAt).toEqual(timestampFromDate(at));
    await stack.answer(batches);
    await waitFor(async () => (await status(campaign!.id)) === CampaignStatus.COMPLETED, 10_000, "completion");
  });

  it("cancels a campaign before fan-out: nothing is published, ever", async () => {
    const at = new Date(Date.now() + 1_500);
    const { campaign } = await campaigns.createCampaign({
      appId,
      name: "cancel me",
      contents,
      target: all,
      scheduledAt: timestampFromDate(at),
    });
    const { campaign: cancelled } = await campaigns.cancelCampaign({ id: campaign!.id });
    expect(cancelled!.status).toBe(CampaignStatus.CANCELLED);

    // Nothing happening has no event of its own: a sentinel due just after it shows the
    // scheduler went past its time (it promotes due campaigns in scheduled_at order).
    const { campaign: sentinel } = await campaigns.createCampaign({
      appId,
      name: "sentinel",
      contents,
      target: all,
      scheduledAt: timestampFromDate(new Date(at.getTime() + 1)),
    });
    await waitFor(async () => (await stack.row(sentinel!.id)).fanout_done, 10_000, "the sentinel's fan-out");
    expect(await status(campaign!.id)).toBe(CampaignStatus.CANCELLED);
    const batches = await stack.takeBatches();
    expect(batches.filter((b) => b.batch.campaignId !== sentinel!.id)).toEqual([]);
    await stack.answer(batches);
    const row = await stack.row(campaign!.id);
    expect(row.fanout_started).toBe(false);

    const again = await campaigns.cancelCampaign({ id: campaign!.id }).catch((e: unknown) => e);
    expect((again as ConnectError).code).toBe(Code.Aborted);
  });

  it("refuses to cancel once fan-out started: ABORTED with CampaignNotCancellable", async () => {
    const { campaign } = await campaigns.createCampaign({ appId, name: "too late", contents, target: all });
    await waitFor(async () => (await stack.row(campaign!.id)).fanout_started, 10_000, "fan-out start");
    const err = await campaigns.cancelCampaign({ id: campaign!.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Aborted);
    expect((err as ConnectError).metadata.get(ERROR_NAME_HEADER)).toBe("CampaignNotCancellable");
    expect((err as ConnectError).rawMessage).toMatch(/can no longer be cancelled: it is (sending|completed)/);
    expect(await status(campaign!.id)).not.toBe(CampaignStatus.CANCELLED);
    await waitFor(async () => (await stack.row(campaign!.id)).fanout_done, 10_000, "fan-out");
    await stack.answer(await stack.takeBatches());
  });
});
