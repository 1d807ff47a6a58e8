import type { Pool } from "@herald/runtime";
import { deviceRuleMatchQuery, type SegmentCriteria } from "./audience-query.js";
import type { InAppAudienceTarget, InAppContentsMap, InAppFields } from "./in-app-message-checks.js";
import type { StoredRule } from "./segment-store.js";

type AudienceKind = InAppAudienceTarget["kind"];

export interface InAppMessageRow {
  id: string;
  app_id: string;
  name: string;
  contents: InAppContentsMap;
  image_url: string | null;
  action_url: string | null;
  audience_kind: AudienceKind;
  segment_id: string | null;
  external_ids: string[] | null;
  starts_at: Date | null;
  ends_at: Date | null;
  priority: number;
  max_impressions: number | null;
  /** bigint counters, as text. */
  impressions: string;
  clicks: string;
  dismissals: string;
  devices: string;
  created_at: Date;
  updated_at: Date;
}

/** A message that may apply to a device, with only what rendering it for that device needs. */
export interface DeviceCandidateRow {
  id: string;
  /** The entry of the device's language, and the fallback; null where the message has none. */
  own: { title: string; body: string } | null;
  fallback: { title: string; body: string } | null;
  image_url: string | null;
  action_url: string | null;
  priority: number;
  ends_at: Date | null;
  /** The stored rule of the message's segment; set only for segment audiences whose segment exists. */
  segment_id: string | null;
  segment_rule: StoredRule | null;
}

export interface DeviceRef {
  id: string;
  app_id: string;
  external_id: string | null;
  language: string | null;
}

export type InAppEvent = "impression" | "click" | "dismiss";

/** What an event did: counted; not counted because the device is at the limit or had dismissed already; or the message or device is gone. */
export type EventResult = "counted" | "limit" | "repeated" | "gone";

export type InAppCreate = { ok: true; message: InAppMessageRow } | { ok: false; reason: "limit" };
export type InAppUpdate = { ok: true; message: InAppMessageRow } | { ok: false; reason: "not_found" | "window" };

/** Every setting, as a create needs them. */
export type CompleteFields = Required<InAppFields>;

export interface InAppMessageStore {
  /** Refuses when the app has `limit` messages already. */
  create(appId: string, fields: CompleteFields, limit: number): Promise<InAppCreate>;
  get(appId: string, id: string): Promise<InAppMessageRow | undefined>;
  /** A page of the app's messages, newest first, and how many it has. */
  list(appId: string, offset: number, limit: number): Promise<{ messages: InAppMessageRow[]; total: number }>;
  update(appId: string, id: string, fields: InAppFields): Promise<InAppUpdate>;
  delete(appId: string, id: string): Promise<boolean>;
  deleteAppMessages(appId: string): Promise<number>;
  /**
   * The device's app's messages that are active now (database time) and whose audience
   * is everyone, names the device's external id, or is a segment that exists (its rule is
   * for the caller to evaluate, see matchRules); highest priority first, then newest.
   * `shown` keeps only those the device has not dismissed and has seen fewer times than
   * max_impressions; `messageId` narrows to one message.
   */
  deviceCandidates(device: DeviceRef, opts: { shown: boolean; messageId?: string }): Promise<DeviceCandidateRow[]>;
  /** Which of the rules the device matches, in order; all false when the device is gone. */
  matchRules(deviceId: string, rules: readonly SegmentCriteria[]): Promise<boolean[]>;
  /** Counts one event of a device, its per-device row and the message's counters together. */
  recordEvent(messageId: string, deviceId: string, event: InAppEvent): Promise<EventResult>;
}

/** InAppFields → column values; only the fields that are set. */
function columns(fields: InAppFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (fields.name !== undefined) out.name = fields.name;
  if (fields.contents !== undefined) out.contents = JSON.stringify(fields.contents);
  if (fields.imageUrl !== undefined) out.image_url = fields.imageUrl;
  if (fields.actionUrl !== undefined) out.action_url = fields.actionUrl;
  if (fields.audience !== undefined) {
    const a = fields.audience;
    out.audience_kind = a.kind;
    out.segment_id = a.kind === "segment" ? a.segmentId : null;
    out.external_ids = a.kind === "external_ids" ? a.externalIds : null;
  }
  if (fields.startsAt !== undefined) out.starts_at = fields.startsAt;
  if (fields.endsAt !== undefined) out.ends_at = fields.endsAt;
  if (fields.priority !== undefined) out.priority = fields.priority;
  if (fields.maxImpressions !== undefined) out.max_impressions = fields.maxImpressions;
  return out;
}

/** check_violation: the window constraint, when two updates raced past the service's check. */
const isCheckViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === "23514";
/** foreign_key_violation: the message or the device was deleted while an event was recorded. */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === "23503";

/**
 * Each event is one statement: the upsert of the per-device row (which enforces the
 * limit and the single dismissal under its row lock) feeds the update of the message's
 * counters, so both commit or neither does. The counter update takes the message row's
 * lock until commit, so the events of one message are serialised: fine at the pace of
 * people looking at messages (each device sends a few events per message), but a message
 * shown to very many devices at once is capped at some thousands of events per second by
 * that one row. Beyond that, the counters would have to be summed from
 * in_app_message_devices instead (or spread over several counter rows).
 */
const EVENT_SQL: Record<InAppEvent, string> = {
  impression: `
    WITH d AS (
      INSERT INTO in_app_message_devices AS s (message_id, device_id, impressions) VALUES ($1, $2, 1)
      ON CONFLICT (message_id, device_id) DO UPDATE SET impressions = s.impressions + 1, updated_at = now()
        WHERE s.impressions < COALESCE((SELECT max_impressions FROM in_app_messages WHERE id = $1), 2147483647)
      RETURNING s.impressions
    )
    UPDATE in_app_messages m
       SET impressions = m.impressions + 1, devices = m.devices + CASE WHEN d.impressions = 1 THEN 1 ELSE 0 END
      FROM d WHERE m.id = $1
    RETURNING 1`,
  click: `
    WITH d AS (
      INSERT INTO in_app_message_devices AS s (message_id, device_id, clicked_at) VALUES ($1, $2, now())
      ON CONFLICT (message_id, device_id) DO UPDATE SET clicked_at = COALESCE(s.clicked_at, now()), updated_at = now()
      RETURNING 1
    )
    UPDATE in_app_messages m SET clicks = m.clicks + 1 FROM d WHERE m.id = $1
    RETURNING 1`,
  dismiss: `
    WITH d AS (
      INSERT INTO in_app_message_devices AS s (message_id, device_id, dismissed_at) VALUES ($1, $2, now())
      ON CONFLICT (message_id, device_id) DO UPDATE SET dismissed_at = now(), updated_at = now()
        WHERE s.dismissed_at IS NULL
      RETURNING 1
    )
    UPDATE in_app_messages m SET dismissals = m.dismissals + 1 FROM d WHERE m.id = $1
    RETURNING 1`,
};

/** What an event that changed nothing means. */
const NOT_COUNTED: Record<InAppEvent, EventResult> = { impression: "limit", click: "gone", dismiss: "repeated" };

export class PgInAppMessageStore implements InAppMessageStore {
  constructor(private readonly pool: Pool) {}

  async create(appId: string, fields: CompleteFields, limit: number): Promise<InAppCreate> {
    const set = columns(fields);
    const names = Object.keys(set);
    // The count and the insert in one statement; a race past the limit by one is harmless.
    const { rows } = await this.pool.query<InAppMessageRow>(
      `INSERT INTO in_app_messages (app_id, ${names.join(", ")})
       SELECT $1, ${names.map((_, i) => `$${i + 3}`).join(", ")}
       WHERE (SELECT count(*) FROM in_app_messages WHERE app_id = $1) < $2
       RETURNING *`,
      [appId, limit, ...Object.values(set)],
    );
    return rows[0] ? { ok: true, message: rows[0] } : { ok: false, reason: "limit" };
  }

  async get(appId: string, id: string) {
    const { rows } = await this.pool.query<InAppMessageRow>(
      "SELECT * FROM in_app_messages WHERE app_id = $1 AND id = $2",
      [appId, id],
    );
    return rows[0];
  }

  async list(appId: string, offset: number, limit: number) {
    const [page, count] = await Promise.all([
      this.pool.query<InAppMessageRow>(
        "SELECT * FROM in_app_messages WHERE app_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3",
        [appId, offset, limit],
      ),
      this.pool.query<{ total: string }>("SELECT count(*) AS total FROM in_app_messages WHERE app_id = $1", [appId]),
    ]);
    return { messages: page.rows, total: Number(count.rows[0]!.total) };
  }

  async update(appId: string, id: string, fields: InAppFields): Promise<InAppUpdate> {
    const set = columns(fields);
    const assignments = [...Object.keys(set).map((c, i) => `${c} = $${i + 3}`), "updated_at = now()"];
    try {
      const { rows } = await this.pool.query<InAppMessageRow>(
        `UPDATE in_app_messages SET ${assignments.join(", ")} WHERE app_id = $1 AND id = $2 RETURNING *`,
        [appId, id, ...Object.values(set)],
      );
      return rows[0] ? { ok: true, message: rows[0] } : { ok: false, reason: "not_found" };
    } catch (err) {
      if (isCheckViolation(err)) return { ok: false, reason: "window" };
      throw err;
    }
  }

  async delete(appId: string, id: string) {
    const res = await this.pool.query("DELETE FROM in_app_messages WHERE app_id = $1 AND id = $2", [appId, id]);
    return (res.rowCount ?? 0) > 0;
  }

  async deleteAppMessages(appId: string) {
    const res = await this.pool.query("DELETE FROM in_app_messages WHERE app_id = $1", [appId]);
    return res.rowCount ?? 0;
  }

  async deviceCandidates(device: DeviceRef, opts: { shown: boolean; messageId?: string }) {
    const values: unknown[] = [device.app_id, device.id, device.external_id, device.language];
    const where = [
      "m.app_id = $1",
      "(m.starts_at IS NULL OR m.starts_at <= now())",
      "(m.ends_at IS NULL OR m.ends_at > now())",
      `(m.audience_kind = 'all'
        OR (m.audience_kind = 'external_ids' AND $3::text = ANY(m.external_ids))
        OR (m.audience_kind = 'segment' AND g.id IS NOT NULL))`,
    ];
    if (opts.messageId !== undefined) {
      values.push(opts.messageId);
      where.push(`m.id = $${values.length}`);
    }
    if (opts.shown) {
      where.push(
        "s.dismissed_at IS NULL",
        "(m.max_impressions IS NULL OR COALESCE(s.impressions, 0) < m.max_impressions)",
      );
    }
    // Only the two languages a device can get are read, never whole contents or id lists.
    const { rows } = await this.pool.query<DeviceCandidateRow>(
      `SELECT m.id, m.contents -> $4::text AS own, m.contents -> 'en' AS fallback, m.image_url, m.action_url,
              m.priority, m.ends_at, m.segment_id, g.rule AS segment_rule
       FROM in_app_messages m
       LEFT JOIN in_app_message_devices s ON s.message_id = m.id AND s.device_id = $2
       LEFT JOIN segments g ON m.audience_kind = 'segment' AND g.id = m.segment_id AND g.app_id = m.app_id
       WHERE ${where.join(" AND ")}
       ORDER BY m.priority DESC, m.created_at DESC, m.id DESC`,
      values,
    );
    return rows;
  }

  async matchRules(deviceId: string, rules: readonly SegmentCriteria[]) {
    if (rules.length === 0) return [];
    const q = deviceRuleMatchQuery(deviceId, rules);
    const { rows } = await this.pool.query<{ matches: boolean[] }>(q.text, q.values);
    return rows[0]?.matches ?? rules.map(() => false);
  }

  async recordEvent(messageId: string, deviceId: string, event: InAppEvent): Promise<EventResult> {
    try {
      const { rowCount } = await this.pool.query(EVENT_SQL[event], [messageId, deviceId]);
      return (rowCount ?? 0) > 0 ? "counted" : NOT_COUNTED[event];
    } catch (err) {
      if (isForeignKeyViolation(err)) return "gone";
      throw err;
    }
  }
}
