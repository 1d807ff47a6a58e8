import { inTransaction, type Pool, writeOutbox } from "@herald/runtime";
import { type CompletedCampaignRow, completedEvent, startedEvent } from "./campaign-events.js";
import type { DeliveryContext } from "./batch-builder.js";
import type { CampaignStatusName, PlatformName, Target } from "./campaign.js";
import { toTarget, type CampaignRow } from "./campaign-store.js";

/**
 * The write-ahead record of the batch being published: enough to rebuild it after a
 * crash (the devices of `platform` in (fromCursor, toDeviceId], at most `count`).
 */
export interface PendingBatch {
  platform: PlatformName;
  seq: number;
  fromCursor: string | null;
  toDeviceId: string;
  count: number;
}

/** A campaign whose fan-out this replica holds the lease of, and where the fan-out stands. */
export interface FanoutJob {
  id: string;
  leaseToken: string;
  appId: string;
  target: Target;
  delivery: DeliveryContext;
  /** The platform being walked and its last safely published device id. */
  platform: PlatformName;
  cursor: string | undefined;
  pending: PendingBatch | undefined;
  /** Trace context of the request that created the campaign (W3C), if it was traced. */
  traceContext: string | undefined;
  /** Created for later: its firing starts a trace of its own, linked to the creating request's. */
  scheduled: boolean;
}

/** Another replica took the campaign over (our lease expired): stop touching it. */
export class LeaseLostError extends Error {
  constructor(campaignId: string) {
    super(`fan-out lease of campaign ${campaignId} was lost`);
    this.name = "LeaseLostError";
  }
}

interface FanoutRow extends CampaignRow {
  lease_token: string;
  fanout_platform: PlatformName;
  fanout_cursor: string | null;
  pending_batch: PendingBatch | null;
}

function toJob(row: FanoutRow): FanoutJob {
  return {
    id: row.id,
    leaseToken: row.lease_token,
    appId: row.app_id,
    target: toTarget(row),
    delivery: {
      campaignId: row.id,
      appId: row.app_id,
      contents: row.contents,
      dataJson: row.data_json,
      ttlSeconds: row.ttl_seconds,
      highPriority: row.priority === "high",
      ...(row.collapse_id !== null ? { collapseId: row.collapse_id } : {}),
      ...(row.image_url !== null ? { imageUrl: row.image_url } : {}),
      ...(row.notification !== null ? { notification: row.notification } : {}),
      // A scheduled campaign's ttl starts when it is due, not when it was stored.
      createdAt: row.scheduled_at && row.scheduled_at > row.created_at ? row.scheduled_at : row.created_at,
    },
    platform: row.fanout_platform,
    cursor: row.fanout_cursor ?? undefined,
    pending: row.pending_batch ?? undefined,
    traceContext: row.trace_context ?? undefined,
    scheduled: row.scheduled_at !== null,
  };
}

/**
 * Fan-out state in the campaign row. Every write after the claim is conditional on the
 * lease token, so a replica that lost its lease can never move the state on.
 */
export class FanoutStore {
  constructor(
    private readonly pool: Pool,
    private readonly leaseMs: number,
    /** Webhook events were written to the outbox: publish them now. */
    private readonly onEvents: () => void = () => undefined,
  ) {}

  /**
   * Takes one queued campaign, or one whose holder's lease ran out; SKIP LOCKED keeps
   * replicas apart. The first claim announces campaign.started.
   */
  async claim(leaseToken: string): Promise<FanoutJob | undefined> {
    const row = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<FanoutRow & { was_started: boolean }>(
        `UPDATE campaigns c
         SET status = 'sending', sent_at = COALESCE(c.sent_at, now()), fanout_started = true,
             lease_token = $1, lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
         FROM (SELECT id, fanout_started AS was_started FROM campaigns
               WHERE status = 'queued' OR (status = 'sending' AND NOT fanout_done AND lease_until < now())
               ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED) prev
         WHERE c.id = prev.id
         RETURNING c.*, prev.was_started`,
        [leaseToken, this.leaseMs],
      );
      if (rows[0] && !rows[0].was_started)
        await writeOutbox(client, [startedEvent(rows[0] as FanoutRow & { sent_at: Date })]);
      return rows[0];
    });
    if (row && !row.was_started) this.onEvents();
    return row ? toJob(row) : undefined;
  }

  /** The job as stored now (after a failed attempt); throws LeaseLostError when it is no longer ours. */
  async load(id: string, leaseToken: string): Promise<FanoutJob> {
    const { rows } = await this.pool.query<FanoutRow>(
      "SELECT * FROM campaigns WHERE id = $1 AND lease_token = $2 AND status = 'sending' AND NOT fanout_done",
      [id, leaseToken],
    );
    if (!rows[0]) throw new LeaseLostError(id);
    return toJob(rows[0]);
  }

  renewLease(id: string, leaseToken: string): Promise<void> {
    return this.update(id, leaseToken, "lease_until = now() + $3 * interval '1 millisecond'", [this.leaseMs]);
  }

  /** CountAudience's answer, shown while fan-out runs; replaced by the exact count at the end. */
  setEstimate(id: string, leaseToken: string, estimate: number): Promise<void> {
    return this.update(id, leaseToken, "audience_size = $3", [estimate]);
  }

  /** Records the batch about to be published and reserves its sequence number. */
  async writePending(id: string, leaseToken: string, batch: Omit<PendingBatch, "seq">): Promise<number> {
    const { rows } = await this.pool.query<{ seq: string }>(
      `UPDATE campaigns
       SET pending_batch = jsonb_build_object('platform', $3::text, 'seq', next_sequence, 'fromCursor', $4::text,
                                              'toDeviceId', $5::text, 'count', $6::int),
           next_sequence = next_sequence + 1,
           lease_until = now() + $7 * interval '1 millisecond', updated_at = now()
       WHERE id = $1 AND lease_token = $2 AND pending_batch IS NULL
       RETURNING next_sequence - 1 AS seq`,
      [id, leaseToken, batch.platform, batch.fromCursor, batch.toDeviceId, batch.count, this.leaseMs],
    );
    if (!rows[0]) throw new LeaseLostError(id);
    return Number(rows[0].seq);
  }

  /** The pending batch is in the stream: move the cursor past it and count its targets. */
  commitBatch(id: string, leaseToken: string, toDeviceId: string, count: number): Promise<void> {
    return this.update(
      id,
      leaseToken,
      `fanout_cursor = $3, published_count = published_count + $4, pending_batch = NULL,
       lease_until = now() + $5 * interval '1 millisecond'`,
      [toDeviceId, count, this.leaseMs],
    );
  }

  startPlatform(id: string, leaseToken: string, platform: PlatformName): Promise<void> {
    return this.update(id, leaseToken, "fanout_platform = $3, fanout_cursor = NULL", [platform]);
  }

  /**
   * Every platform is walked: the audience is exactly what was published. The campaign
   * completes here when its outcomes are already all in (or it had no audience).
   */
  async finish(id: string, leaseToken: string): Promise<CampaignStatusName> {
    const row = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<CompletedCampaignRow & { status: CampaignStatusName }>(
        `UPDATE campaigns
         SET fanout_done = true, audience_size = published_count, lease_token = NULL, lease_until = NULL,
             status = CASE WHEN sent >= published_count THEN 'completed' ELSE status END,
             completed_at = CASE WHEN sent >= published_count THEN now() ELSE completed_at END,
             updated_at = now()
         WHERE id = $1 AND lease_token = $2
         RETURNING id, app_id, status, completed_at, audience_size, sent, delivered, failed, bounced, throttled`,
        [id, leaseToken],
      );
      if (!rows[0]) throw new LeaseLostError(id);
      if (rows[0].status === "completed") await writeOutbox(client, [completedEvent(rows[0])]);
      return rows[0];
    });
    if (row.status === "completed") this.onEvents();
    return row.status;
  }

  /** A permanent problem (e.g. the segment was deleted): what was published still reports outcomes. */
  fail(id: string, leaseToken: string, reason: string): Promise<void> {
    return this.update(
      id,
      leaseToken,
      `status = 'failed', failure_reason = $3, fanout_done = true, audience_size = published_count,
       lease_token = NULL, lease_until = NULL`,
      [reason],
    );
  }

  /** On shutdown: let another replica resume at once instead of waiting out the lease. */
  async release(id: string, leaseToken: string): Promise<void> {
    await this.pool.query("UPDATE campaigns SET lease_until = now() WHERE id = $1 AND lease_token = $2", [
      id,
      leaseToken,
    ]);
  }

  private async update(id: string, leaseToken: string, set: string, values: unknown[]): Promise<void> {
    const { rowCount } = await this.pool.query(
      `UPDATE campaigns SET ${set}, updated_at = now() WHERE id = $1 AND lease_token = $2`,
      [id, leaseToken, ...values],
    );
    if (rowCount === 0) throw new LeaseLostError(id);
  }
}
