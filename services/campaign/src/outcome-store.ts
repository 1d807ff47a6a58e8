import { inTransaction, type Pool } from "@herald/runtime";

export type OutcomeKindName = "delivered" | "failed" | "bounced" | "throttled";

export const OUTCOME_KINDS: readonly OutcomeKindName[] = ["delivered", "failed", "bounced", "throttled"];

export interface OutcomeRecord {
  campaignId: string;
  deviceId: string;
  kind: OutcomeKindName;
  reason: string;
  attempts: number;
}

export interface RecordedOutcomes {
  /** Newly recorded outcomes by kind; redelivered ones are not in here. */
  byKind: Record<OutcomeKindName, number>;
  /** Campaigns that this call completed. */
  completed: string[];
}

/**
 * Records per-device outcomes and keeps the campaigns' counters. One outcome per
 * (campaign, device): only rows actually inserted are counted, so a redelivered batch
 * changes nothing. Outcomes of campaigns that do not exist are dropped.
 */
export class OutcomeStore {
  constructor(private readonly pool: Pool) {}

  async record(outcomes: readonly OutcomeRecord[]): Promise<RecordedOutcomes> {
    const byKind: Record<OutcomeKindName, number> = { delivered: 0, failed: 0, bounced: 0, throttled: 0 };
    if (outcomes.length === 0) return { byKind, completed: [] };
    const campaignIds = [...new Set(outcomes.map((o) => o.campaignId))];
    return inTransaction(this.pool, async (client) => {
      // Lock the campaigns first, in id order: replicas recording outcomes of the same
      // campaigns then queue up instead of deadlocking on rows and outcome keys.
      const { rows: existing } = await client.query<{ id: string }>(
        "SELECT id FROM campaigns WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE",
        [campaignIds],
      );
      if (existing.length === 0) return { byKind, completed: [] };
      const { rows } = await client.query<{ id: string; completed: boolean } & Record<OutcomeKindName, string>>(
        `WITH inserted AS (
           INSERT INTO outcomes (campaign_id, device_id, kind, reason, attempts)
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int[])
             AS u (campaign_id, device_id, kind, reason, attempts)
           WHERE u.campaign_id = ANY($6::uuid[])
           ON CONFLICT DO NOTHING
           RETURNING campaign_id, kind
         ), counts AS (
           SELECT campaign_id, count(*) AS sent,
                  count(*) FILTER (WHERE kind = 'delivered') AS delivered,
                  count(*) FILTER (WHERE kind = 'failed') AS failed,
                  count(*) FILTER (WHERE kind = 'bounced') AS bounced,
                  count(*) FILTER (WHERE kind = 'throttled') AS throttled
           FROM inserted GROUP BY campaign_id
         )
         UPDATE campaigns c
         SET sent = c.sent + k.sent, delivered = c.delivered + k.delivered, failed = c.failed + k.failed,
             bounced = c.bounced + k.bounced, throttled = c.throttled + k.throttled,
             status = CASE WHEN c.status = 'sending' AND c.fanout_done AND c.sent + k.sent >= c.audience_size
                           THEN 'completed' ELSE c.status END,
             completed_at = CASE WHEN c.status = 'sending' AND c.fanout_done AND c.sent + k.sent >= c.audience_size
                                 THEN now() ELSE c.completed_at END,
             updated_at = now()
         FROM counts k
         WHERE c.id = k.campaign_id
         -- now() is the transaction's start: completed_at equals it only if set just now.
         RETURNING c.id, k.delivered, k.failed, k.bounced, k.throttled, (c.status = 'completed' AND c.completed_at = now()) AS completed`,
        [
          outcomes.map((o) => o.campaignId),
          outcomes.map((o) => o.deviceId),
          outcomes.map((o) => o.kind),
          outcomes.map((o) => o.reason),
          outcomes.map((o) => o.attempts),
          existing.map((r) => r.id),
        ],
      );
      const completed: string[] = [];
      for (const row of rows) {
        for (const kind of OUTCOME_KINDS) byKind[kind] += Number(row[kind]);
        if (row.completed) completed.push(row.id);
      }
      return { byKind, completed };
    });
  }
}
