import { inTransaction, type Pool } from "@herald/runtime";

export type EngagementKindName = "received" | "clicked";

/** One device's report about one campaign, with the app the gateway authenticated it for. */
export interface EngagementReport {
  appId: string;
  deviceId: string;
  campaignId: string;
  kind: EngagementKindName;
}

/** Per report, in order: counted now, already counted before, or not a sent campaign of that app. */
export type EngagementResult = "counted" | "repeated" | "unknown_campaign";

/** Campaigns a device may report about: fan-out has handed them to providers. */
const SENT_STATUSES = ["sending", "completed", "failed"];

/**
 * Records engagement reports and keeps the campaigns' `received` and `clicked` counters.
 * One row per (campaign, device): a report repeated by a retrying client, or a second
 * click, counts once; a click also counts as received (the device cannot click what it
 * did not show, even if its "received" report was lost). Rows and counters move in one
 * transaction, for a whole batch of reports (engagement-recorder.ts coalesces them), so a
 * large campaign's reports cost one counter update per batch, not one per device.
 */
export class EngagementStore {
  constructor(private readonly pool: Pool) {}

  async record(reports: readonly EngagementReport[]): Promise<EngagementResult[]> {
    if (reports.length === 0) return [];
    const campaignIds = [...new Set(reports.map((r) => r.campaignId))].sort();
    return inTransaction(this.pool, async (client) => {
      // The campaigns first, locked in id order like the outcome store does, so both queue
      // up on a campaign row instead of deadlocking on it and on their own keys.
      const { rows: campaigns } = await client.query<{ id: string; app_id: string }>(
        "SELECT id, app_id FROM campaigns WHERE id = ANY($1::uuid[]) AND status = ANY($2::text[]) ORDER BY id FOR UPDATE",
        [campaignIds, SENT_STATUSES],
      );
      const appOf = new Map(campaigns.map((c) => [c.id, c.app_id]));
      const valid = reports.filter((r) => appOf.get(r.campaignId) === r.appId);
      const pairs = uniquePairs(valid);
      const clicks = uniquePairs(valid.filter((r) => r.kind === "clicked"));

      const received = await client.query<{ campaign_id: string; device_id: string }>(
        `INSERT INTO engagement (campaign_id, device_id)
         SELECT * FROM unnest($1::uuid[], $2::uuid[])
         ON CONFLICT DO NOTHING
         RETURNING campaign_id, device_id`,
        [pairs.map((p) => p.campaignId), pairs.map((p) => p.deviceId)],
      );
      const clicked = await client.query<{ campaign_id: string; device_id: string }>(
        `UPDATE engagement e SET clicked_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS c (campaign_id, device_id)
         WHERE e.campaign_id = c.campaign_id AND e.device_id = c.device_id AND e.clicked_at IS NULL
         RETURNING e.campaign_id, e.device_id`,
        [clicks.map((p) => p.campaignId), clicks.map((p) => p.deviceId)],
      );

      const newlyReceived = new Set(received.rows.map(pairKey));
      const newlyClicked = new Set(clicked.rows.map(pairKey));
      const counts = new Map<string, { received: number; clicked: number }>();
      const bump = (campaignId: string, field: "received" | "clicked") => {
        const c = counts.get(campaignId) ?? { received: 0, clicked: 0 };
        c[field]++;
        counts.set(campaignId, c);
      };
      for (const r of received.rows) bump(r.campaign_id, "received");
      for (const r of clicked.rows) bump(r.campaign_id, "clicked");
      if (counts.size > 0) {
        const ids = [...counts.keys()].sort();
        await client.query(
          `UPDATE campaigns c SET received = c.received + d.received, clicked = c.clicked + d.clicked
           FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS d (id, received, clicked)
           WHERE c.id = d.id`,
          [ids, ids.map((id) => counts.get(id)!.received), ids.map((id) => counts.get(id)!.clicked)],
        );
      }

      // Each newly counted pair answers "counted" once: to the first report that made it.
      return reports.map((r): EngagementResult => {
        if (appOf.get(r.campaignId) !== r.appId) return "unknown_campaign";
        const fresh = r.kind === "clicked" ? newlyClicked : newlyReceived;
        return fresh.delete(pairKey({ campaign_id: r.campaignId, device_id: r.deviceId })) ? "counted" : "repeated";
      });
    });
  }
}

const pairKey = (p: { campaign_id: string; device_id: string }) => `${p.campaign_id}/${p.device_id}`;

/** Distinct (campaign, device) pairs in key order, so concurrent batches lock rows in one order. */
function uniquePairs(reports: readonly EngagementReport[]): { campaignId: string; deviceId: string }[] {
  const byKey = new Map(
    reports.map((r) => [pairKey({ campaign_id: r.campaignId, device_id: r.deviceId }), r] as const),
  );
  return [...byKey.keys()].sort().map((key) => {
    const r = byKey.get(key)!;
    return { campaignId: r.campaignId, deviceId: r.deviceId };
  });
}
