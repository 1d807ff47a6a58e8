import { inTransaction, type Pool } from "@herald/runtime";

/** One device's receipt of one campaign, as stored in receipt_batches. */
export interface Receipt {
  campaignId: string;
  deviceId: string;
  /** herald.v1.Platform (0: recorded before receipts knew the platform). */
  platform: number;
  /** herald.v1.OutcomeKind: 1 delivered, 2 failed, 3 bounced, 4 throttled. */
  outcome: number;
  reason: string;
  attempts: number;
  at: Date;
}

/** Receipts of one campaign as parallel columns (herald.v1.ReceiptColumns): entry i of each is receipt i. */
export interface ReceiptColumns {
  deviceIds: string[];
  platforms: number[];
  outcomes: number[];
  /** "" when there is none. */
  reasons: string[];
  attempts: number[];
  recordedAtMs: number[];
}

const emptyColumns = (): ReceiptColumns => ({
  deviceIds: [],
  platforms: [],
  outcomes: [],
  reasons: [],
  attempts: [],
  recordedAtMs: [],
});

export interface ReceiptFilter {
  /** 0: every outcome. */
  outcome: number;
  /** 0: every platform. */
  platform: number;
}

interface BatchRow {
  platform: number;
  sequence: string;
  recorded_at: Date;
  device_ids: string[];
  outcomes: number[];
  reasons: (string | null)[];
  attempts: number[];
}

/** The filtered count of a batch, from its per-kind columns (no array is read). */
const COUNT = `CASE $2::int WHEN 0 THEN delivered + failed + bounced + throttled WHEN 1 THEN delivered
                 WHEN 2 THEN failed WHEN 3 THEN bounced ELSE throttled END`;

/** Batches read at once by the export: a few thousand receipts. */
const EXPORT_BATCHES = 8;
const EXPORT_CHUNK = 1_000;

/**
 * Reads, erases and prunes the per-device receipts that OutcomeStore writes, one row per
 * delivery batch. Paging walks the batches' per-kind counts to find the one or two rows
 * a page falls in, so a deep page reads no more arrays than the first.
 */
export class ReceiptStore {
  constructor(private readonly pool: Pool) {}

  async list(campaignId: string, filter: ReceiptFilter, offset: number, limit: number) {
    // The batches the page falls in, and the first batch, which carries the total even
    // when the page is past the end.
    const { rows: spans } = await this.pool.query<{
      platform: number;
      sequence: string;
      before: string;
      cnt: number;
      total: string;
    }>(
      `SELECT platform, sequence, before, cnt, total FROM (
         SELECT platform, sequence, cnt, sum(cnt) OVER (ORDER BY platform, sequence) - cnt AS before,
                sum(cnt) OVER () AS total
         FROM (SELECT platform, sequence, ${COUNT} AS cnt FROM receipt_batches
               WHERE campaign_id = $1 AND ($3::int = 0 OR platform = $3)) x
         WHERE cnt > 0) y
       WHERE (before < $4::bigint + $5 AND before + cnt > $4) OR before = 0
       ORDER BY platform, sequence`,
      [campaignId, filter.outcome, filter.platform, offset, limit],
    );
    const total = spans[0] ? Number(spans[0].total) : 0;
    const inPage = spans.filter((s) => Number(s.before) < offset + limit && Number(s.before) + s.cnt > offset);
    if (inPage.length === 0) return { receipts: [] as Receipt[], total };
    const { rows } = await this.pool.query<BatchRow>(
      `SELECT platform, sequence, recorded_at, device_ids, outcomes, reasons, attempts FROM receipt_batches
       WHERE campaign_id = $1 AND (platform, sequence) IN (SELECT * FROM unnest($2::smallint[], $3::bigint[]))
       ORDER BY platform, sequence`,
      [campaignId, inPage.map((s) => s.platform), inPage.map((s) => s.sequence)],
    );
    let skip = offset - Number(inPage[0]!.before);
    const receipts: Receipt[] = [];
    for (const row of rows) {
      for (const r of receiptsOf(campaignId, row, filter)) {
        if (skip > 0) {
          skip--;
          continue;
        }
        if (receipts.length === limit) break;
        receipts.push(r);
      }
    }
    return { receipts, total };
  }

  /**
   * Every receipt that passes the filter, in chunks of at most EXPORT_CHUNK as columns
   * (no object per receipt: an export may hold millions), reading a few batches at a time.
   */
  async *export(campaignId: string, filter: ReceiptFilter, signal?: AbortSignal): AsyncGenerator<ReceiptColumns> {
    let after: { platform: number; sequence: string } = { platform: -1, sequence: "0" };
    let chunk = emptyColumns();
    for (;;) {
      signal?.throwIfAborted();
      const { rows } = await this.pool.query<BatchRow>(
        `SELECT platform, sequence, recorded_at, device_ids, outcomes, reasons, attempts FROM receipt_batches
         WHERE campaign_id = $1 AND ($3::int = 0 OR platform = $3) AND ${COUNT} > 0
           AND (platform, sequence) > ($4::smallint, $5::bigint)
         ORDER BY platform, sequence LIMIT ${EXPORT_BATCHES}`,
        [campaignId, filter.outcome, filter.platform, after.platform, after.sequence],
      );
      for (const row of rows) {
        const at = row.recorded_at.getTime();
        for (let i = 0; i < row.device_ids.length; i++) {
          const outcome = row.outcomes[i]!;
          if (filter.outcome !== 0 && outcome !== filter.outcome) continue;
          chunk.deviceIds.push(row.device_ids[i]!);
          chunk.platforms.push(row.platform);
          chunk.outcomes.push(outcome);
          chunk.reasons.push(row.reasons[i] ?? "");
          chunk.attempts.push(row.attempts[i]!);
          chunk.recordedAtMs.push(at);
          if (chunk.deviceIds.length === EXPORT_CHUNK) {
            yield chunk;
            chunk = emptyColumns();
          }
        }
      }
      if (rows.length < EXPORT_BATCHES) break;
      const last = rows[rows.length - 1]!;
      after = { platform: last.platform, sequence: last.sequence };
    }
    if (chunk.deviceIds.length > 0) yield chunk;
  }

  /**
   * A device's receipts of the app's campaigns, newest first: the GiST index on each
   * batch's id range finds the candidate batches, the array says whether the device is in.
   */
  async ofDevice(appId: string, deviceId: string, limit: number): Promise<Receipt[]> {
    const { rows } = await this.pool.query<{
      campaign_id: string;
      platform: number;
      recorded_at: Date;
      outcome: number;
      reason: string | null;
      attempts: number;
    }>(
      `SELECT r.campaign_id, r.platform, r.recorded_at, u.outcome, u.reason, u.attempts
       FROM receipt_batches r
       JOIN campaigns c ON c.id = r.campaign_id AND c.app_id = $1
       CROSS JOIN LATERAL (
         SELECT x.outcome, x.reason, x.attempts
         FROM unnest(r.device_ids, r.outcomes, r.reasons, r.attempts) AS x (device_id, outcome, reason, attempts)
         WHERE x.device_id = $2 LIMIT 1) u
       WHERE r.devices @> $2::uuid
       ORDER BY r.recorded_at DESC, r.campaign_id LIMIT $3`,
      [appId, deviceId, limit],
    );
    return rows.map((r) => ({
      campaignId: r.campaign_id,
      deviceId,
      platform: r.platform,
      outcome: r.outcome,
      reason: r.reason ?? "",
      attempts: r.attempts,
      at: r.recorded_at,
    }));
  }

  /**
   * Removes these devices of the app from every receipt batch (the arrays are rewritten
   * without them, the per-kind counts with them; a batch left empty stays as the
   * idempotency key of its outcome message) and deletes their engagement rows. Campaign
   * stats are kept: they name no device. A repeat finds nothing and answers zeros.
   */
  async erase(appId: string, deviceIds: string[]): Promise<{ receipts: number; engagements: number }> {
    if (deviceIds.length === 0) return { receipts: 0, engagements: 0 };
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ removed: string }>(
        `WITH hit AS (
           SELECT DISTINCT r.campaign_id, r.platform, r.sequence
           FROM unnest($2::uuid[]) AS e (device_id)
           JOIN receipt_batches r ON r.devices @> e.device_id
           JOIN campaigns c ON c.id = r.campaign_id AND c.app_id = $1
           WHERE e.device_id = ANY (r.device_ids)
         ), kept AS (
           SELECT h.campaign_id, h.platform, h.sequence,
                  count(*) FILTER (WHERE u.device_id = ANY ($2::uuid[])) AS removed,
                  coalesce(array_agg(u.device_id ORDER BY u.i) FILTER (WHERE u.keep), '{}') AS device_ids,
                  coalesce(array_agg(u.outcome ORDER BY u.i) FILTER (WHERE u.keep), '{}') AS outcomes,
                  coalesce(array_agg(u.reason ORDER BY u.i) FILTER (WHERE u.keep), '{}') AS reasons,
                  coalesce(array_agg(u.attempts ORDER BY u.i) FILTER (WHERE u.keep), '{}') AS attempts,
                  (array_agg(u.device_id ORDER BY u.device_id) FILTER (WHERE u.keep))[1] AS first,
                  (array_agg(u.device_id ORDER BY u.device_id DESC) FILTER (WHERE u.keep))[1] AS last,
                  count(*) FILTER (WHERE u.keep AND u.outcome = 1) AS delivered,
                  count(*) FILTER (WHERE u.keep AND u.outcome = 2) AS failed,
                  count(*) FILTER (WHERE u.keep AND u.outcome = 3) AS bounced,
                  count(*) FILTER (WHERE u.keep AND u.outcome = 4) AS throttled
           FROM hit h
           JOIN receipt_batches r USING (campaign_id, platform, sequence)
           CROSS JOIN LATERAL (
             SELECT x.*, x.device_id <> ALL ($2::uuid[]) AS keep
             FROM unnest(r.device_ids, r.outcomes, r.reasons, r.attempts) WITH ORDINALITY
               AS x (device_id, outcome, reason, attempts, i)) u
           GROUP BY h.campaign_id, h.platform, h.sequence
         )
         UPDATE receipt_batches r
         SET device_ids = k.device_ids, outcomes = k.outcomes, reasons = k.reasons, attempts = k.attempts,
             devices = CASE WHEN k.first IS NULL THEN 'empty'::uuid_range ELSE uuid_range(k.first, k.last, '[]') END,
             delivered = k.delivered, failed = k.failed, bounced = k.bounced, throttled = k.throttled
         FROM kept k
         WHERE (r.campaign_id, r.platform, r.sequence) = (k.campaign_id, k.platform, k.sequence)
         RETURNING k.removed`,
        [appId, deviceIds],
      );
      const engagement = await client.query(
        `DELETE FROM engagement e USING campaigns c
         WHERE c.id = e.campaign_id AND c.app_id = $1 AND e.device_id = ANY ($2::uuid[])`,
        [appId, deviceIds],
      );
      return { receipts: rows.reduce((n, r) => n + Number(r.removed), 0), engagements: engagement.rowCount ?? 0 };
    });
  }

  /**
   * Deletes up to `limit` receipt batches and engagement rows recorded before `before`;
   * answers how many of each, or undefined when another replica is pruning this schema
   * (an advisory lock per statement: replicas never delete side by side, and the one
   * that finds the lock taken leaves the work to the other).
   */
  async prune(before: Date, limit: number): Promise<{ batches: number; engagements: number } | undefined> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtext('herald.receipt_prune.' || current_schema())) AS locked",
      );
      if (!rows[0]!.locked) return undefined;
      const batches = await client.query(
        `DELETE FROM receipt_batches WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM receipt_batches WHERE recorded_at < $1 LIMIT $2))`,
        [before, limit],
      );
      const engagements = await client.query(
        `DELETE FROM engagement WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM engagement WHERE received_at < $1 LIMIT $2))`,
        [before, limit],
      );
      return { batches: batches.rowCount ?? 0, engagements: engagements.rowCount ?? 0 };
    });
  }
}

function* receiptsOf(campaignId: string, row: BatchRow, filter: ReceiptFilter): Generator<Receipt> {
  for (let i = 0; i < row.device_ids.length; i++) {
    const outcome = row.outcomes[i]!;
    if (filter.outcome !== 0 && outcome !== filter.outcome) continue;
    yield {
      campaignId,
      deviceId: row.device_ids[i]!,
      platform: row.platform,
      outcome,
      reason: row.reasons[i] ?? "",
      attempts: row.attempts[i]!,
      at: row.recorded_at,
    };
  }
}
