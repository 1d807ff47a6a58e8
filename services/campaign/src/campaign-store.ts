import { randomUUID } from "node:crypto";
import { currentTraceContext, inTransaction, type Pool, writeOutbox } from "@herald/runtime";
import { cancelledEvent } from "./campaign-events.js";
import type {
  CampaignRecord,
  CampaignStatusName,
  Contents,
  NewCampaign,
  NotificationOptions,
  Target,
} from "./campaign.js";

export interface IdempotencyKey {
  scope: string;
  key: string;
}

export type CancelResult =
  | { ok: true; campaign: CampaignRecord }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "not_cancellable"; status: CampaignStatusName };

/** Campaign rows as the RPCs and the scheduler see them. Fan-out and outcomes have their own stores. */
export interface CampaignStore {
  /**
   * Inserts the campaign. With an idempotency key that is already taken (and not yet
   * expired) it inserts nothing and returns the campaign that took it.
   */
  create(
    campaign: NewCampaign,
    status: "scheduled" | "queued",
    idempotency?: IdempotencyKey,
  ): Promise<{ campaign: CampaignRecord; created: boolean }>;
  findByIdempotencyKey(idempotency: IdempotencyKey): Promise<CampaignRecord | undefined>;
  get(id: string): Promise<CampaignRecord | undefined>;
  /** Newest first; only campaigns in `status` when given. */
  list(
    appId: string,
    status: CampaignStatusName | undefined,
    offset: number,
    limit: number,
  ): Promise<{ campaigns: CampaignRecord[]; total: number }>;
  /** Cancels a scheduled or queued campaign whose fan-out has not started, in one statement. */
  cancel(id: string): Promise<CancelResult>;
  /** Moves due scheduled campaigns to queued; returns how many. Safe across replicas. */
  promoteDue(limit: number): Promise<number>;
  purgeExpiredIdempotencyKeys(): Promise<number>;
  /**
   * Removes an erased user's external id from the external_ids target of the app's
   * campaigns that name it; returns how many campaigns changed (a repeat: 0).
   */
  removeExternalId(appId: string, externalId: string): Promise<number>;
}

export const IDEMPOTENCY_TTL_HOURS = 24;

export interface CampaignRow {
  id: string;
  app_id: string;
  name: string;
  status: CampaignStatusName;
  contents: Contents;
  data_json: string;
  target_kind: "all" | "external_ids" | "segment" | "device_ids";
  external_ids: string[] | null;
  segment_id: string | null;
  device_ids: string[] | null;
  ttl_seconds: number;
  priority: "normal" | "high";
  collapse_id: string | null;
  image_url: string | null;
  notification: NotificationOptions | null;
  scheduled_at: Date | null;
  trace_context: string | null;
  audience_size: string;
  sent: string;
  delivered: string;
  failed: string;
  bounced: string;
  throttled: string;
  received: string;
  clicked: string;
  failure_reason: string | null;
  sent_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function toTarget(row: Pick<CampaignRow, "target_kind" | "external_ids" | "segment_id" | "device_ids">): Target {
  switch (row.target_kind) {
    case "all":
      return { kind: "all" };
    case "external_ids":
      return { kind: "external_ids", externalIds: row.external_ids ?? [] };
    case "segment":
      return { kind: "segment", segmentId: row.segment_id ?? "" };
    case "device_ids":
      return { kind: "device_ids", deviceIds: row.device_ids ?? [] };
  }
}

export function toCampaignRecord(row: CampaignRow): CampaignRecord {
  return {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    status: row.status,
    contents: row.contents,
    dataJson: row.data_json,
    target: toTarget(row),
    options: {
      ttlSeconds: row.ttl_seconds,
      priority: row.priority,
      ...(row.collapse_id !== null ? { collapseId: row.collapse_id } : {}),
      ...(row.image_url !== null ? { imageUrl: row.image_url } : {}),
      ...(row.notification !== null ? { notification: row.notification } : {}),
    },
    ...(row.scheduled_at ? { scheduledAt: row.scheduled_at } : {}),
    audienceSize: Number(row.audience_size),
    stats: {
      sent: Number(row.sent),
      delivered: Number(row.delivered),
      failed: Number(row.failed),
      bounced: Number(row.bounced),
      throttled: Number(row.throttled),
      received: Number(row.received),
      clicked: Number(row.clicked),
    },
    ...(row.failure_reason !== null ? { failureReason: row.failure_reason } : {}),
    ...(row.sent_at ? { sentAt: row.sent_at } : {}),
    ...(row.completed_at ? { completedAt: row.completed_at } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class PgCampaignStore implements CampaignStore {
  constructor(
    private readonly pool: Pool,
    /** Webhook events were written to the outbox: publish them now. */
    private readonly onEvents: () => void = () => undefined,
  ) {}

  async create(c: NewCampaign, status: "scheduled" | "queued", idempotency?: IdempotencyKey) {
    return inTransaction(this.pool, async (client) => {
      const id = randomUUID();
      if (idempotency) {
        // Claims the key, or takes over an expired one. A concurrent request with the
        // same key waits here for this transaction and then finds the key taken.
        const claimed = await client.query(
          `INSERT INTO idempotency_keys (scope, key, campaign_id, expires_at)
           VALUES ($1, $2, $3, now() + make_interval(hours => $4))
           ON CONFLICT (scope, key) DO UPDATE
             SET campaign_id = EXCLUDED.campaign_id, expires_at = EXCLUDED.expires_at
             WHERE idempotency_keys.expires_at <= now()
           RETURNING campaign_id`,
          [idempotency.scope, idempotency.key, id, IDEMPOTENCY_TTL_HOURS],
        );
        if (claimed.rowCount === 0) {
          const { rows } = await client.query<CampaignRow>(
            `SELECT c.* FROM idempotency_keys k JOIN campaigns c ON c.id = k.campaign_id WHERE k.scope = $1 AND k.key = $2`,
            [idempotency.scope, idempotency.key],
          );
          if (!rows[0]) throw new Error("idempotency key taken but its campaign is missing");
          return { campaign: toCampaignRecord(rows[0]), created: false };
        }
      }
      const { rows } = await client.query<CampaignRow>(
        `INSERT INTO campaigns (id, app_id, name, status, contents, data_json, target_kind, external_ids, segment_id,
                                device_ids, ttl_seconds, priority, collapse_id, image_url, scheduled_at, trace_context,
                                notification)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         RETURNING *`,
        [
          id,
          c.appId,
          c.name,
          status,
          JSON.stringify(c.contents),
          c.dataJson,
          c.target.kind,
          c.target.kind === "external_ids" ? c.target.externalIds : null,
          c.target.kind === "segment" ? c.target.segmentId : null,
          c.target.kind === "device_ids" ? c.target.deviceIds : null,
          c.options.ttlSeconds,
          c.options.priority,
          c.options.collapseId ?? null,
          c.options.imageUrl ?? null,
          c.scheduledAt ?? null,
          // The creating request's trace (the RPC's server span), for the fan-out to continue.
          currentTraceContext() ?? null,
          c.options.notification ? JSON.stringify(c.options.notification) : null,
        ],
      );
      return { campaign: toCampaignRecord(rows[0]!), created: true };
    });
  }

  async findByIdempotencyKey(idempotency: IdempotencyKey) {
    const { rows } = await this.pool.query<CampaignRow>(
      `SELECT c.* FROM idempotency_keys k JOIN campaigns c ON c.id = k.campaign_id
       WHERE k.scope = $1 AND k.key = $2 AND k.expires_at > now()`,
      [idempotency.scope, idempotency.key],
    );
    return rows[0] ? toCampaignRecord(rows[0]) : undefined;
  }

  async get(id: string) {
    const { rows } = await this.pool.query<CampaignRow>("SELECT * FROM campaigns WHERE id = $1", [id]);
    return rows[0] ? toCampaignRecord(rows[0]) : undefined;
  }

  async list(appId: string, status: CampaignStatusName | undefined, offset: number, limit: number) {
    // An app's campaigns are made by people, not devices: walking the app's range of
    // campaigns_app_created_idx and filtering by status stays cheap without an index of its own.
    const where = "app_id = $1 AND ($2::text IS NULL OR status = $2)";
    const [page, count] = await Promise.all([
      this.pool.query<CampaignRow>(
        `SELECT * FROM campaigns WHERE ${where} ORDER BY created_at DESC, id DESC OFFSET $3 LIMIT $4`,
        [appId, status ?? null, offset, limit],
      ),
      this.pool.query<{ total: string }>(`SELECT count(*) AS total FROM campaigns WHERE ${where}`, [
        appId,
        status ?? null,
      ]),
    ]);
    return { campaigns: page.rows.map(toCampaignRecord), total: Number(count.rows[0]?.total ?? 0) };
  }

  async cancel(id: string): Promise<CancelResult> {
    // The fan-out claim takes the same row lock and sets fanout_started, so a cancel
    // either wins before fan-out or sees that it started; there is no window between.
    const cancelled = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<CampaignRow>(
        `UPDATE campaigns SET status = 'cancelled', updated_at = now()
         WHERE id = $1 AND status IN ('scheduled', 'queued') AND NOT fanout_started
         RETURNING *`,
        [id],
      );
      if (rows[0]) await writeOutbox(client, [cancelledEvent(rows[0])]);
      return rows[0];
    });
    if (cancelled) {
      this.onEvents();
      return { ok: true, campaign: toCampaignRecord(cancelled) };
    }
    const current = await this.get(id);
    return current
      ? { ok: false, reason: "not_cancellable", status: current.status }
      : { ok: false, reason: "not_found" };
  }

  async promoteDue(limit: number) {
    const { rowCount } = await this.pool.query(
      `UPDATE campaigns SET status = 'queued', updated_at = now()
       WHERE id IN (SELECT id FROM campaigns WHERE status = 'scheduled' AND scheduled_at <= now()
                    ORDER BY scheduled_at FOR UPDATE SKIP LOCKED LIMIT $1)`,
      [limit],
    );
    return rowCount ?? 0;
  }

  async removeExternalId(appId: string, externalId: string) {
    // A campaign left with no external id targets nobody (the registry's
    // external_id = ANY('{}') matches no device); it keeps its kind and counters.
    const { rowCount } = await this.pool.query(
      `UPDATE campaigns SET external_ids = array_remove(external_ids, $2), updated_at = now()
       WHERE app_id = $1 AND target_kind = 'external_ids' AND $2 = ANY (external_ids)`,
      [appId, externalId],
    );
    return rowCount ?? 0;
  }

  async purgeExpiredIdempotencyKeys() {
    const { rowCount } = await this.pool.query("DELETE FROM idempotency_keys WHERE expires_at <= now()");
    return rowCount ?? 0;
  }
}
