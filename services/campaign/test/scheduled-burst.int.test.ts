import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CampaignStatus } from "@herald/proto/campaign";
import { beforeAll, describe, expect, it } from "vitest";
import { type Instance, useStack, waitFor } from "./harness.js";

/**
 * Many scheduled campaigns due in the same second, with three campaign service replicas
 * on one database: each fires exactly once (one fan-out, one published batch, never a
 * second publish that JetStream would have to drop as a duplicate). The count is
 * HERALD_BURST_CAMPAIGNS (1,000 by default).
 */
const CAMPAIGNS = Number(process.env.HERALD_BURST_CAMPAIGNS ?? 1_000);
const REPLICAS = 3;

describe("a burst of scheduled campaigns", () => {
  const stack = useStack();
  let replicas: Instance[];
  const appId = randomUUID();

  beforeAll(async () => {
    replicas = [];
    for (let i = 0; i < REPLICAS; i++) replicas.push(await stack.startInstance({ SCHEDULER_INTERVAL_MS: "200" }));
    await stack.seed(appId, [{ platform: "ios" }]);
  });

  it(`fires ${CAMPAIGNS} campaigns due in the same second exactly once across ${REPLICAS} replicas`, async () => {
    const due = new Date(Math.ceil((Date.now() + 15_000) / 1000) * 1000);
    const ids: string[] = [];
    for (let i = 0; i < CAMPAIGNS; i += 50) {
      const created = await Promise.all(
        Array.from({ length: Math.min(50, CAMPAIGNS - i) }, (_, j) =>
          replicas[(i + j) % REPLICAS]!.client.createCampaign({
            appId,
            name: `burst-${i + j}`,
            contents: { en: { title: "Now", body: "All at once" } },
            target: { target: { case: "all", value: {} } },
            scheduledAt: timestampFromDate(due),
          }),
        ),
      );
      for (const { campaign } of created) {
        expect(campaign!.status).toBe(CampaignStatus.SCHEDULED);
        ids.push(campaign!.id);
      }
    }
    expect(Date.now(), "creating the campaigns took longer than the lead time").toBeLessThan(due.getTime());

    const { rows: done } = await waitFor(
      async () => {
        const res = await stack.campaignPool.query<{ n: string }>(
          "SELECT count(*) AS n FROM campaigns WHERE fanout_done AND id = ANY($1::uuid[])",
          [ids],
        );
        return Number(res.rows[0]!.n) === CAMPAIGNS ? res : undefined;
      },
      120_000,
      "every fan-out",
    );
    expect(Number(done[0]!.n)).toBe(CAMPAIGNS);
    const firedAfter = Date.now() - due.getTime();

    // One batch per campaign in the stream, each with the one device.
    const batches = await stack.takeBatches();
    expect(batches).toHaveLength(CAMPAIGNS);
    expect(new Set(batches.map((b) => b.batch.campaignId))).toEqual(new Set(ids));
    expect(batches.every((b) => b.batch.targets.length === 1)).toBe(true);
    // No replica published a campaign another had published (JetStream would have hidden it).
    const published = await Promise.all(
      replicas.map(async (r) => ({
        accepted: await r.metric("herald_delivery_batches_published_total", 'result="accepted"'),
        duplicate: await r.metric("herald_delivery_batches_published_total", 'result="duplicate"'),
      })),
    );
    expect(published.reduce((n, p) => n + p.accepted, 0)).toBe(CAMPAIGNS);
    expect(published.reduce((n, p) => n + p.duplicate, 0)).toBe(0);
    const { rows } = await stack.campaignPool.query<{ published_count: string; next_sequence: string }>(
      "SELECT published_count, next_sequence FROM campaigns WHERE id = ANY($1::uuid[])",
      [ids],
    );
    expect(rows.every((r) => r.published_count === "1" && r.next_sequence === "1")).toBe(true);
    console.log(
      `scheduled burst: ${CAMPAIGNS} campaigns due at once, all fanned out ${firedAfter} ms after their time; ` +
        `batches per replica ${published.map((p) => p.accepted).join(" / ")}`,
    );
  }, 300_000);
});
