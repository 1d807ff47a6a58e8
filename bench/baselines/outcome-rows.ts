import { fromBinary } from "@bufbuild/protobuf";
import { OutcomeBatchSchema, OutcomeKind } from "@herald/proto/delivery";
import { inTransaction, isUuid, type Pool } from "@herald/runtime";

// The outcome path before receipt batches, kept as the "before" side of bench/outcomes.ts:
// one `outcomes` row per device (primary key (campaign_id, device_id), a foreign key to
// campaigns), counted into the campaign in the same statement. This is the campaign
// service's decode and OutcomeStore.record of commit c338793 (services/campaign/src/
// outcome-consumer.ts and outcome-store.ts there), without the consumer around them; its
// schema is the campaign service's migrations 001–005.

type Kind = "delivered" | "failed" | "bounced" | "throttled";
interface OutcomeRecord {
  campaignId: string;
  deviceId: string;
  kind: Kind;
  reason: string;
  attempts: number;
}

const KIND: Partial<Record<OutcomeKind, Kind>> = {
  [OutcomeKind.DELIVERED]: "delivered",
  [OutcomeKind.FAILED]: "failed",
  [OutcomeKind.BOUNCED]: "bounced",
  [OutcomeKind.THROTTLED]: "throttled",
};

export function decodeRows(data: Uint8Array): OutcomeRecord[] {
  const batch = fromBinary(OutcomeBatchSchema, data);
  const campaignId = batch.campaignId;
  if (!isUuid(campaignId)) throw new Error("campaign_id is not a UUID");
  return batch.outcomes.map((o) => {
    if (!isUuid(o.deviceId)) throw new Error("device_id is not a UUID");
    return {
      campaignId: campaignId.toLowerCase(),
      deviceId: o.deviceId.toLowerCase(),
      kind: KIND[o.kind] ?? "failed",
      reason: (KIND[o.kind] ? o.reason : o.reason || `UnknownOutcomeKind:${o.kind}`).slice(0, 200),
      attempts: Math.min(o.attempts, 2 ** 31 - 1),
    };
  });
}

export async function recordRows(pool: Pool, outcomes: readonly OutcomeRecord[]): Promise<number> {
  if (outcomes.length === 0) return 0;
  const campaignIds = [...new Set(outcomes.map((o) => o.campaignId))];
  return inTransaction(pool, async (client) => {
    const { rows: existing } = await client.query<{ id: string }>(
      "SELECT id FROM campaigns WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE",
      [campaignIds],
    );
    const { rows } = await client.query<{ sent: string }>(
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
       RETURNING k.sent`,
      [
        outcomes.map((o) => o.campaignId),
        outcomes.map((o) => o.deviceId),
        outcomes.map((o) => o.kind),
        outcomes.map((o) => o.reason),
        outcomes.map((o) => o.attempts),
        existing.map((r) => r.id),
      ],
    );
    return rows.reduce((n, r) => n + Number(r.sent), 0);
  });
}
