import { inTransaction, MAX_DELIVERIES_PER_EVENT, type OutboxEvent, type Pool, writeOutbox } from "@herald/runtime";
import { completedEvent, type CompletedCampaignRow, deliveriesEvent } from "./campaign-events.js";

export type OutcomeKindName = "delivered" | "failed" | "bounced" | "throttled";

/** In herald.v1.OutcomeKind's order: the number stored for a kind is its index + 1. */
export const OUTCOME_KINDS: readonly OutcomeKindName[] = ["delivered", "failed", "bounced", "throttled"];

export type PlatformNumber = 1 | 2 | 3;

/** One sender's OutcomeBatch: the results of one delivery batch, stored as one row. */
export interface OutcomeBatchRecord {
  campaignId: string;
  /** herald.v1.Platform. */
  platform: PlatformNumber;
  /** The delivery batch's sequence within the campaign and platform: with both, the idempotency key. */
  sequence: bigint;
  deviceIds: string[];
  /** herald.v1.OutcomeKind (1 delivered … 4 throttled), one per device. */
  outcomes: number[];
  /** The provider's reason; null where delivered. */
  reasons: (string | null)[];
  attempts: number[];
}

export interface RecordedOutcomes {
  /** Newly recorded outcomes by kind; redelivered batches are not in here. */
  byKind: Record<OutcomeKindName, number>;
  /** Campaigns that this call completed. */
  completed: string[];
  /** Whether outbox events were written (the relay should flush). */
  events: boolean;
}

const MAX_ATTEMPTS = 32_767;

/**
 * Records outcome batches and keeps the campaigns' counters, all in one transaction:
 * one row per batch (its devices' results in arrays), one counter update per campaign,
 * and the webhook events they cause (deliveries.failed / .bounced per batch, and
 * campaign.completed) in the outbox. Only batches actually inserted are counted, so a
 * redelivered one changes nothing. Batches of campaigns that do not exist are dropped.
 */
export class OutcomeStore {
  constructor(private readonly pool: Pool) {}

  async record(batches: readonly OutcomeBatchRecord[]): Promise<RecordedOutcomes> {
    const byKind: Record<OutcomeKindName, number> = { delivered: 0, failed: 0, bounced: 0, throttled: 0 };
    const result: RecordedOutcomes = { byKind, completed: [], events: false };
    if (batches.length === 0) return result;
    const campaignIds = [...new Set(batches.map((b) => b.campaignId))];
    return inTransaction(this.pool, async (client) => {
      // Lock the campaigns first, in id order: replicas recording outcomes of the same
      // campaigns then queue up instead of deadlocking on rows and batch keys.
      const { rows: existing } = await client.query<{ id: string; app_id: string }>(
        "SELECT id, app_id FROM campaigns WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE",
        [campaignIds],
      );
      if (existing.length === 0) return result;
      const appOf = new Map(existing.map((r) => [r.id, r.app_id]));
      // A batch and its redelivered copy may arrive in one call: the first one stands for both.
      const keys = new Set<string>();
      const known = batches.filter((b) => {
        const key = batchKey(b.campaignId, b.platform, b.sequence);
        if (!appOf.has(b.campaignId) || keys.has(key)) return false;
        keys.add(key);
        return true;
      });

      // The batches' arrays travel as one flat array each; a row takes its slice [lo:hi].
      const flat = {
        deviceIds: [] as string[],
        outcomes: [] as number[],
        reasons: [] as (string | null)[],
        attempts: [] as number[],
      };
      const meta = {
        lo: [] as number[],
        hi: [] as number[],
        first: [] as string[],
        last: [] as string[],
        counts: [[], [], [], []] as number[][],
      };
      for (const b of known) {
        meta.lo.push(flat.deviceIds.length + 1);
        let first = b.deviceIds[0]!;
        let last = first;
        const counts = [0, 0, 0, 0];
        for (let i = 0; i < b.deviceIds.length; i++) {
          const id = b.deviceIds[i]!;
          // Lower-case hex compares as PostgreSQL compares uuids (bytewise).
          if (id < first) first = id;
          if (id > last) last = id;
          flat.deviceIds.push(id);
          flat.outcomes.push(b.outcomes[i]!);
          flat.reasons.push(b.reasons[i]!);
          flat.attempts.push(Math.min(b.attempts[i]!, MAX_ATTEMPTS));
          counts[b.outcomes[i]! - 1]!++;
        }
        meta.hi.push(flat.deviceIds.length);
        meta.first.push(first);
        meta.last.push(last);
        for (let k = 0; k < 4; k++) meta.counts[k]!.push(counts[k]!);
      }
      const { rows: inserted } = await client.query<{ campaign_id: string; platform: number; sequence: string }>(
        `INSERT INTO receipt_batches (campaign_id, platform, sequence, devices, device_ids, outcomes, reasons, attempts,
                                      delivered, failed, bounced, throttled)
         SELECT m.campaign_id, m.platform, m.sequence, uuid_range(m.first, m.last, '[]'),
                ($8::uuid[])[m.lo:m.hi], ($9::smallint[])[m.lo:m.hi], ($10::text[])[m.lo:m.hi], ($11::smallint[])[m.lo:m.hi],
                m.delivered, m.failed, m.bounced, m.throttled
         FROM unnest($1::uuid[], $2::smallint[], $3::bigint[], $4::int[], $5::int[], $6::uuid[], $7::uuid[],
                     $12::int[], $13::int[], $14::int[], $15::int[])
           AS m (campaign_id, platform, sequence, lo, hi, first, last, delivered, failed, bounced, throttled)
         ON CONFLICT DO NOTHING
         RETURNING campaign_id, platform, sequence`,
        [
          known.map((b) => b.campaignId),
          known.map((b) => b.platform),
          known.map((b) => b.sequence.toString()),
          meta.lo,
          meta.hi,
          meta.first,
          meta.last,
          flat.deviceIds,
          flat.outcomes,
          flat.reasons,
          flat.attempts,
          ...meta.counts,
        ],
      );
      if (inserted.length === 0) return result;

      const isNew = new Set(inserted.map((r) => batchKey(r.campaign_id, r.platform, r.sequence)));
      const perCampaign = new Map<string, number[]>();
      const events: OutboxEvent[] = [];
      for (const [i, b] of known.entries()) {
        if (!isNew.has(batchKey(b.campaignId, b.platform, b.sequence))) continue;
        // The batch's counts per kind, as computed for its row above.
        const sums = perCampaign.get(b.campaignId) ?? [0, 0, 0, 0];
        for (let k = 0; k < 4; k++) sums[k]! += meta.counts[k]![i]!;
        perCampaign.set(b.campaignId, sums);
        events.push(...deliveriesEvents(b, appOf.get(b.campaignId)!));
      }
      const ids = [...perCampaign.keys()];
      const sums = (k: number) => ids.map((id) => perCampaign.get(id)![k]!);
      const { rows: updated } = await client.query<CompletedCampaignRow & { completed_now: boolean }>(
        `UPDATE campaigns c
         SET sent = c.sent + k.delivered + k.failed + k.bounced + k.throttled,
             delivered = c.delivered + k.delivered, failed = c.failed + k.failed,
             bounced = c.bounced + k.bounced, throttled = c.throttled + k.throttled,
             status = CASE WHEN c.status = 'sending' AND c.fanout_done
                                AND c.sent + k.delivered + k.failed + k.bounced + k.throttled >= c.audience_size
                           THEN 'completed' ELSE c.status END,
             completed_at = CASE WHEN c.status = 'sending' AND c.fanout_done
                                     AND c.sent + k.delivered + k.failed + k.bounced + k.throttled >= c.audience_size
                                 THEN now() ELSE c.completed_at END,
             updated_at = now()
         FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int[], $5::int[]) AS k (id, delivered, failed, bounced, throttled)
         WHERE c.id = k.id
         -- now() is the transaction's start: completed_at equals it only if set just now.
         RETURNING c.id, c.app_id, c.completed_at, c.audience_size, c.sent, c.delivered, c.failed, c.bounced, c.throttled,
                   (c.status = 'completed' AND c.completed_at = now()) AS completed_now`,
        [ids, sums(0), sums(1), sums(2), sums(3)],
      );
      for (const row of updated) {
        if (!row.completed_now) continue;
        result.completed.push(row.id);
        events.push(completedEvent(row));
      }
      await writeOutbox(client, events);
      result.events = events.length > 0;
      for (const [, s] of perCampaign) {
        for (const [k, kind] of OUTCOME_KINDS.entries()) byKind[kind] += s[k]!;
      }
      return result;
    });
  }
}

const batchKey = (campaignId: string, platform: number, sequence: bigint | string) =>
  `${campaignId}/${platform}/${sequence}`;

const PLATFORM_NAMES = { 1: "ios", 2: "android", 3: "web" } as const;

/** deliveries.failed and .bounced of one batch (a delivery batch holds at most 5,000 devices: up to 5 events a kind). */
function deliveriesEvents(b: OutcomeBatchRecord, appId: string): OutboxEvent[] {
  const out: OutboxEvent[] = [];
  for (const [kind, type] of [
    [2, "deliveries.failed"],
    [3, "deliveries.bounced"],
  ] as const) {
    const items: { device_id: string; platform: string; reason: string; attempts: number }[] = [];
    for (let i = 0; i < b.deviceIds.length; i++) {
      if (b.outcomes[i] !== kind) continue;
      items.push({
        device_id: b.deviceIds[i]!,
        platform: PLATFORM_NAMES[b.platform],
        reason: b.reasons[i] ?? "",
        attempts: b.attempts[i]!,
      });
    }
    for (let part = 0; part * MAX_DELIVERIES_PER_EVENT < items.length; part++) {
      const slice = items.slice(part * MAX_DELIVERIES_PER_EVENT, (part + 1) * MAX_DELIVERIES_PER_EVENT);
      out.push(deliveriesEvent(type, b.campaignId, appId, `${b.platform}.${b.sequence}.${part}`, slice));
    }
  }
  return out;
}
