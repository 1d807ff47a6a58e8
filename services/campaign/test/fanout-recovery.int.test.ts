import { randomUUID } from "node:crypto";
import { DiscardPolicy } from "@nats-io/jetstream";
import { CampaignStatus } from "@herald/proto/campaign";
import { beforeAll, describe, expect, it } from "vitest";
import {
  PLATFORMS,
  type SeedDevice,
  type SeededDevice,
  type ReceivedBatch,
  type Instance,
  useStack,
  waitFor,
  targetsOf,
} from "./harness.js";

const LANGUAGES = ["en", "de", "fr", null];
const contents = { en: { title: "Hello", body: "World" }, de: { title: "Hallo", body: "Welt" } };
const all = { target: { case: "all" as const, value: {} } };
const PUBLISHED = "herald_delivery_batches_published_total";

/** n devices over the platforms and languages, some opted out or invalid. */
const population = (n: number): SeedDevice[] =>
  Array.from({ length: n }, (_, i) => ({
    platform: PLATFORMS[i % 3]!,
    language: LANGUAGES[i % 4]!,
    optedIn: i % 17 !== 3,
    invalid: i % 19 === 5,
  }));

/** Every targetable device exactly once in the accepted batches, in its language; sequences 0..n-1. */
function expectExactlyOnce(batches: ReceivedBatch[], devices: SeededDevice[]): void {
  const got = targetsOf(batches); // throws on a device in two batches
  const targetable = devices.filter((d) => d.targetable);
  expect(got.size).toBe(targetable.length);
  for (const d of targetable) expect(got.get(d.id)?.title).toBe(d.language === "de" ? "Hallo" : "Hello");
  expect(batches.map((b) => Number(b.batch.sequence)).sort((a, b) => a - b)).toEqual(batches.map((_, i) => i));
}

/** Targets in the first n batches of 50: the platforms are walked in order, each ending in a partial batch. */
function countOfFirstBatches(devices: SeededDevice[], n: number): number {
  let total = 0;
  for (const platform of PLATFORMS) {
    for (
      let left = devices.filter((d) => d.targetable && d.platform === platform).length;
      left > 0 && n > 0;
      left -= 50, n--
    ) {
      total += Math.min(50, left);
    }
  }
  return total;
}

describe("fan-out recovery", () => {
  const stack = useStack();
  const env = {
    FANOUT_BATCH_SIZE: "50",
    FANOUT_PAGE_SIZE: "200",
    FANOUT_LEASE_MS: "2000",
    SCHEDULER_INTERVAL_MS: "100",
  };

  beforeAll(async () => {});

  async function finishAndComplete(
    client: Instance["client"],
    campaignId: string,
    batches: ReceivedBatch[],
    audience: number,
  ) {
    const row = await stack.row(campaignId);
    expect(Number(row.published_count)).toBe(audience);
    expect(Number(row.audience_size)).toBe(audience);
    expect(row.pending_batch).toBeNull();
    await stack.answer(batches);
    const done = await waitFor(
      async () => {
        const { campaign } = await client.getCampaign({ id: campaignId });
        return campaign?.status === CampaignStatus.COMPLETED ? campaign : undefined;
      },
      20_000,
      "completion",
    );
    expect(done.audienceSize).toBe(BigInt(audience));
    expect(done.stats?.sent).toBe(BigInt(audience));
    expect(done.stats?.delivered).toBe(BigInt(audience));
  }

  it("resumes after a crash with a batch recorded but never stored: each device once, exact counts", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, population(5_000));
    const first = await stack.startInstance(env);
    // The stream takes 30 batches, then refuses: the fan-out is stuck retrying batch 30.
    await stack.jsm.streams.update(stack.names.deliveryStream, { max_msgs: 30, discard: DiscardPolicy.New });
    const { campaign } = await first.client.createCampaign({ appId, name: "big", contents, target: all });
    const id = campaign!.id;
    const stuck = await waitFor(
      async () => {
        const row = await stack.row(id);
        return (row.pending_batch as { seq?: number } | null)?.seq === 30 ? row : undefined;
      },
      20_000,
      "a stuck batch",
    );
    await first.close();

    expect(stuck).toMatchObject({
      status: "sending",
      fanout_done: false,
      published_count: String(countOfFirstBatches(devices, 30)),
    });
    expect(stuck.pending_batch).toMatchObject({ seq: 30, count: 50 });
    expect(await stack.row(id)).toMatchObject({
      published_count: stuck.published_count,
      pending_batch: stuck.pending_batch,
    });
    // A crash, not a clean stop: the lease is still held for a while.
    await stack.campaignPool.query("UPDATE campaigns SET lease_until = now() + interval '1 second' WHERE id = $1", [
      id,
    ]);
    await stack.jsm.streams.update(stack.names.deliveryStream, { max_msgs: -1 });

    const second = await stack.startInstance(env);
    await waitFor(async () => (await stack.row(id)).fanout_done, 30_000, "fan-out");
    const batches = await stack.takeBatches();
    expectExactlyOnce(batches, devices);
    expect(await second.metric(PUBLISHED, 'result="duplicate"')).toBe(0);
    await finishAndComplete(second.client, id, batches, devices.filter((d) => d.targetable).length);
    await second.close();
  });

  it("counts a batch stored just before a crash once and does not send it again", async () => {
    const appId = randomUUID();
    const devices = await stack.seed(appId, population(1_000));
    const instance = await stack.startInstance(env);
    const { campaign } = await instance.client.createCampaign({ appId, name: "stored", contents, target: all });
    const id = campaign!.id;
    await waitFor(async () => (await stack.row(id)).fanout_done, 20_000, "fan-out");
    const { next_sequence: batchCount } = await stack.row(id);

    // Put the row back to the moment after the last batch (web) was stored but before its
    // commit: cursor before the batch, its count not yet added, its pending record set.
    const web = devices
      .filter((d) => d.targetable && d.platform === "web")
      .map((d) => d.id)
      .sort();
    const lastCount = web.length % 50 || 50;
    const from = web.length > lastCount ? web[web.length - lastCount - 1]! : null;
    const pending = {
      platform: "web",
      seq: Number(batchCount) - 1,
      fromCursor: from,
      toDeviceId: web[web.length - 1],
      count: lastCount,
    };
    await stack.campaignPool.query(
      `UPDATE campaigns SET status = 'sending', fanout_done = false, fanout_platform = 'web', fanout_cursor = $2,
         published_count = published_count - $3, audience_size = 0, pending_batch = $4,
         lease_token = gen_random_uuid(), lease_until = now() - interval '1 second'
       WHERE id = $1`,
      [id, from, lastCount, JSON.stringify(pending)],
    );

    await waitFor(async () => (await stack.row(id)).fanout_done, 20_000, "fan-out after the crash");
    expect(await instance.metric(PUBLISHED, 'result="duplicate"')).toBe(1);
    const batches = await stack.takeBatches();
    expect(batches.length).toBe(Number(batchCount));
    expectExactlyOnce(batches, devices);
    await finishAndComplete(instance.client, id, batches, devices.filter((d) => d.targetable).length);
    await instance.close();
  });

  it("fans each campaign out once when two instances run at the same time", async () => {
    const [a, b] = [await stack.startInstance(env), await stack.startInstance(env)];
    const apps = await Promise.all(
      [0, 1, 2].map(async () => {
        const appId = randomUUID();
        return { appId, devices: await stack.seed(appId, population(400)) };
      }),
    );
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 === 0 ? a : b).client.createCampaign({
          appId: apps[i % 3]!.appId,
          name: `c${i}`,
          contents,
          target: all,
        }),
      ),
    );
    const ids = created.map((c) => c.campaign!.id);
    await waitFor(
      async () => (await Promise.all(ids.map((id) => stack.row(id)))).every((r) => r.fanout_done),
      30_000,
      "fan-outs",
    );

    const batches = await stack.takeBatches();
    for (const [i, id] of ids.entries()) {
      expectExactlyOnce(
        batches.filter((x) => x.batch.campaignId === id),
        apps[i % 3]!.devices,
      );
    }
    const accepted =
      (await a.metric(PUBLISHED, 'result="accepted"')) + (await b.metric(PUBLISHED, 'result="accepted"'));
    const duplicates =
      (await a.metric(PUBLISHED, 'result="duplicate"')) + (await b.metric(PUBLISHED, 'result="duplicate"'));
    expect(accepted).toBe(batches.length);
    expect(duplicates).toBe(0);
    await stack.answer(batches);
    for (const [i, id] of ids.entries()) {
      await waitFor(async () => (await stack.row(id)).status === "completed", 20_000, "completion");
      expect(Number((await stack.row(id)).audience_size)).toBe(apps[i % 3]!.devices.filter((d) => d.targetable).length);
    }
    await a.close();
    await b.close();
  });
});
