import { inTransaction, type Pool } from "@herald/runtime";

export interface EndpointRow {
  id: string;
  app_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret_sealed: Buffer;
  secret_key_version: number;
  previous_secret_sealed: Buffer | null;
  previous_secret_key_version: number | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface EndpointCreate {
  id: string;
  appId: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  secretSealed: Buffer;
  secretKeyVersion: number;
}

export interface EndpointChanges {
  url?: string;
  events?: string[];
  description?: string;
  enabled?: boolean;
}

export interface DeliveryRow {
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface StoredEvent {
  id: string;
  appId: string;
  type: string;
  occurredAt: Date;
  /** JSON text. */
  data: string;
  /** Only this endpoint (webhook.test). */
  endpointId?: string;
  /** The W3C trace context its message carried (traceparent[;tracestate]), if any. */
  traceContext?: string;
}

/** A leased delivery with what its attempt needs. */
export interface DueDelivery {
  endpoint_id: string;
  event_id: string;
  attempts: number;
  url: string;
  enabled: boolean;
  secret_sealed: Buffer;
  secret_key_version: number;
  previous_secret_sealed: Buffer | null;
  previous_secret_key_version: number | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  app_id: string;
  type: string;
  occurred_at: Date;
  data: string;
  /** The event's trace context: every attempt's span links to it. */
  trace_context: string | null;
}

/** Why an attempt disabled its endpoint: a 410 answer, or failures for the whole window. */
export interface Disabled {
  cause: "gone" | "failing";
}

export type AttemptResult =
  | { outcome: "delivered"; status: number; body: string }
  | { outcome: "retry"; error: string; status?: number; body?: string; nextInMs: number }
  | { outcome: "failed"; error: string; status?: number; body?: string; disableReason?: string };

/** The tables of the webhooks schema holding an app's rows, in the order they are deleted. */
export const APP_TABLES = ["deliveries", "events", "endpoints"] as const;
export type AppTable = (typeof APP_TABLES)[number];

const DELETE_APP_ROWS: Record<AppTable, string> = {
  deliveries: `DELETE FROM deliveries d USING (
      SELECT x.endpoint_id, x.event_id FROM deliveries x JOIN endpoints e ON e.id = x.endpoint_id
      WHERE e.app_id = $1 LIMIT $2
    ) doomed
    WHERE d.endpoint_id = doomed.endpoint_id AND d.event_id = doomed.event_id`,
  events: "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE app_id = $1 LIMIT $2)",
  endpoints: "DELETE FROM endpoints WHERE id IN (SELECT id FROM endpoints WHERE app_id = $1 LIMIT $2)",
};

const ENDPOINT_COLUMNS = `id, app_id, url, events, description, enabled, disabled_reason, secret_sealed,
  secret_key_version, previous_secret_sealed, previous_secret_key_version, previous_secret_expires_at,
  failing_since, created_at, updated_at`;

export class PgWebhookStore {
  constructor(private readonly pool: Pool) {}

  async create(e: EndpointCreate): Promise<EndpointRow> {
    const { rows } = await this.pool.query<EndpointRow>(
      `INSERT INTO endpoints (id, app_id, url, events, description, enabled, secret_sealed, secret_key_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${ENDPOINT_COLUMNS}`,
      [e.id, e.appId, e.url, e.events, e.description, e.enabled, e.secretSealed, e.secretKeyVersion],
    );
    return rows[0]!;
  }

  async get(appId: string, id: string): Promise<EndpointRow | undefined> {
    const { rows } = await this.pool.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM endpoints WHERE app_id = $1 AND id = $2`,
      [appId, id],
    );
    return rows[0];
  }

  async list(appId: string, limit: number, offset: number): Promise<{ rows: EndpointRow[]; total: number }> {
    const [page, count] = await Promise.all([
      this.pool.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM endpoints WHERE app_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
        [appId, limit, offset],
      ),
      this.pool.query<{ n: string }>("SELECT count(*) AS n FROM endpoints WHERE app_id = $1", [appId]),
    ]);
    return { rows: page.rows, total: Number(count.rows[0]!.n) };
  }

  async update(appId: string, id: string, c: EndpointChanges): Promise<EndpointRow | undefined> {
    const sets: string[] = ["updated_at = now()"];
    const values: unknown[] = [appId, id];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (c.url !== undefined) set("url", c.url);
    if (c.events !== undefined) set("events", c.events);
    if (c.description !== undefined) set("description", c.description);
    if (c.enabled !== undefined) {
      set("enabled", c.enabled);
      // Enabled again by hand: a fresh start for the reason and the failure clock.
      if (c.enabled) sets.push("disabled_reason = NULL", "failing_since = NULL");
    }
    const { rows } = await this.pool.query<EndpointRow>(
      `UPDATE endpoints SET ${sets.join(", ")} WHERE app_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      values,
    );
    return rows[0];
  }

  async delete(appId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM endpoints WHERE app_id = $1 AND id = $2", [appId, id]);
    return (rowCount ?? 0) > 0;
  }

  /** The new secret signs; the current one keeps signing beside it until overlapMs from now. */
  async rotate(
    appId: string,
    id: string,
    sealed: Buffer,
    keyVersion: number,
    overlapMs: number,
  ): Promise<EndpointRow | undefined> {
    const { rows } = await this.pool.query<EndpointRow>(
      `UPDATE endpoints SET
         previous_secret_sealed = secret_sealed,
         previous_secret_key_version = secret_key_version,
         previous_secret_expires_at = now() + $5 * interval '1 millisecond',
         secret_sealed = $3, secret_key_version = $4, updated_at = now()
       WHERE app_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [appId, id, sealed, keyVersion, overlapMs],
    );
    return rows[0];
  }

  /**
   * Records an event and a pending delivery per matching enabled endpoint, in one
   * transaction; an event already recorded (a redelivered message) adds nothing.
   */
  async recordEvent(e: StoredEvent): Promise<{ inserted: boolean; deliveries: number }> {
    return inTransaction(this.pool, async (client) => {
      const ins = await client.query(
        `INSERT INTO events (id, app_id, type, occurred_at, data, trace_context) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO NOTHING`,
        [e.id, e.appId, e.type, e.occurredAt, e.data, e.traceContext ?? null],
      );
      if ((ins.rowCount ?? 0) === 0) return { inserted: false, deliveries: 0 };
      const target = e.endpointId === undefined ? "enabled AND $3 = ANY (events)" : "id = $3::uuid";
      const { rowCount } = await client.query(
        `INSERT INTO deliveries (endpoint_id, event_id, next_attempt_at)
         SELECT id, $1, now() FROM endpoints WHERE app_id = $2 AND ${target}
         ON CONFLICT DO NOTHING`,
        [e.id, e.appId, e.endpointId ?? e.type],
      );
      return { inserted: true, deliveries: rowCount ?? 0 };
    });
  }

  /** Leases up to `limit` due deliveries for leaseMs (replicas skip each other's rows). */
  async claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const { rows } = await this.pool.query<DueDelivery>(
      `WITH due AS (
         SELECT endpoint_id, event_id FROM deliveries
         WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
         ORDER BY next_attempt_at
         LIMIT $1
         FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE deliveries d SET lease_until = now() + $2 * interval '1 millisecond'
         FROM due WHERE d.endpoint_id = due.endpoint_id AND d.event_id = due.event_id
         RETURNING d.endpoint_id, d.event_id, d.attempts
       )
       SELECT c.endpoint_id, c.event_id, c.attempts, e.url, e.enabled, e.secret_sealed, e.secret_key_version,
              e.previous_secret_sealed, e.previous_secret_key_version, e.previous_secret_expires_at,
              e.failing_since, v.app_id, v.type, v.occurred_at, v.data, v.trace_context
       FROM claimed c JOIN endpoints e ON e.id = c.endpoint_id JOIN events v ON v.id = c.event_id`,
      [limit, leaseMs],
    );
    return rows;
  }

  /**
   * Stores an attempt's result and what it means for the endpoint: a success ends its
   * failing streak; a failure starts one (failing_since: the first failure since the last
   * success) or, once the streak has lasted disableAfterMs, disables the endpoint, as does
   * a failure that carries its own reason (410). Answers why the endpoint was disabled, if
   * this attempt did it. An endpoint disabled meanwhile (by hand, or by another attempt)
   * keeps its reason and its streak.
   */
  async finishAttempt(d: DueDelivery, r: AttemptResult, disableAfterMs: number): Promise<Disabled | undefined> {
    return inTransaction(this.pool, async (client) => {
      const status = r.outcome === "delivered" ? "delivered" : r.outcome === "retry" ? "pending" : "failed";
      await client.query(
        `UPDATE deliveries SET status = $3, attempts = attempts + 1, lease_until = NULL,
           next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $4 * interval '1 millisecond' END,
           delivered_at = CASE WHEN $3 = 'delivered' THEN now() END,
           last_error = $5, response_status = $6, response_body = $7
         WHERE endpoint_id = $1 AND event_id = $2`,
        [
          d.endpoint_id,
          d.event_id,
          status,
          r.outcome === "retry" ? r.nextInMs : 0,
          r.outcome === "delivered" ? null : r.error,
          r.status ?? null,
          r.body ?? null,
        ],
      );
      if (r.outcome === "delivered") {
        await client.query("UPDATE endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL", [
          d.endpoint_id,
        ]);
        return undefined;
      }
      if (r.outcome === "failed" && r.disableReason) {
        return (await this.disable(client, d.endpoint_id, r.disableReason)) ? { cause: "gone" } : undefined;
      }
      const { rows } = await client.query<{ failing_since: Date; failing_for_ms: string }>(
        `UPDATE endpoints SET failing_since = coalesce(failing_since, now()) WHERE id = $1 AND enabled
         RETURNING failing_since, extract(epoch FROM now() - failing_since) * 1000 AS failing_for_ms`,
        [d.endpoint_id],
      );
      const streak = rows[0];
      if (!streak || Number(streak.failing_for_ms) < disableAfterMs) return undefined;
      const reason = `no delivery succeeded for ${describeDuration(disableAfterMs)}: every attempt since ${streak.failing_since.toISOString()} failed`;
      return (await this.disable(client, d.endpoint_id, reason)) ? { cause: "failing" } : undefined;
    });
  }

  /** A delivery whose endpoint is disabled ends without an attempt. */
  async abandon(d: DueDelivery, reason: string): Promise<void> {
    await this.pool.query(
      `UPDATE deliveries SET status = 'failed', lease_until = NULL, next_attempt_at = NULL, last_error = $3
       WHERE endpoint_id = $1 AND event_id = $2`,
      [d.endpoint_id, d.event_id, reason],
    );
  }

  /** Disables an enabled endpoint with its reason; false when it was disabled already. */
  private async disable(client: { query: Pool["query"] }, endpointId: string, reason: string): Promise<boolean> {
    const { rowCount } = await client.query(
      "UPDATE endpoints SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1 AND enabled",
      [endpointId, reason],
    );
    if ((rowCount ?? 0) === 0) return false;
    // Nothing more goes to a disabled endpoint.
    await client.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, last_error = coalesce(last_error, $2)
       WHERE endpoint_id = $1 AND status = 'pending' AND lease_until IS NULL`,
      [endpointId, "endpoint disabled"],
    );
    return true;
  }

  async listDeliveries(
    endpointId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const [page, count] = await Promise.all([
      this.pool.query<DeliveryRow>(
        `SELECT d.endpoint_id, d.event_id, v.type AS event_type, d.status, d.attempts, d.next_attempt_at,
                d.last_error, d.response_status, d.response_body, d.created_at, d.delivered_at
         FROM deliveries d JOIN events v ON v.id = d.event_id
         WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.event_id LIMIT $2 OFFSET $3`,
        [endpointId, limit, offset],
      ),
      this.pool.query<{ n: string }>("SELECT count(*) AS n FROM deliveries WHERE endpoint_id = $1", [endpointId]),
    ]);
    return { rows: page.rows, total: Number(count.rows[0]!.n) };
  }

  /**
   * Delivers an event of the app to the endpoint again: the existing delivery goes back
   * to pending now, or a new one is made for an event the endpoint never got.
   */
  async replay(appId: string, endpointId: string, eventId: string): Promise<DeliveryRow | undefined> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `WITH ev AS (SELECT id, type FROM events WHERE id = $3 AND app_id = $1),
       up AS (
         INSERT INTO deliveries (endpoint_id, event_id, next_attempt_at)
         SELECT $2, ev.id, now() FROM ev
         ON CONFLICT (endpoint_id, event_id) DO UPDATE
           SET status = 'pending', next_attempt_at = now(), lease_until = NULL, delivered_at = NULL
         RETURNING *
       )
       SELECT up.endpoint_id, up.event_id, ev.type AS event_type, up.status, up.attempts, up.next_attempt_at,
              up.last_error, up.response_status, up.response_body, up.created_at, up.delivered_at
       FROM up JOIN ev ON ev.id = up.event_id`,
      [appId, endpointId, eventId],
    );
    return rows[0];
  }

  /**
   * Deletes up to `limit` rows of a deleted app from one table and answers how many went:
   * deliveries (to the app's endpoints: every delivery of its events goes to one of them),
   * events, then endpoints. Deliveries go first, in batches, so that no endpoint or event
   * deleted afterwards cascades to a million rows in one statement.
   */
  async deleteAppRows(table: AppTable, appId: string, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(DELETE_APP_ROWS[table], [appId, limit]);
    return rowCount ?? 0;
  }

  /** Pending deliveries: the backlog gauge. */
  async backlog(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM deliveries WHERE status = 'pending'",
    );
    return Number(rows[0]!.n);
  }

  /** Pending deliveries due now, leased (in flight) or not: the due-deliveries gauge. */
  async due(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM deliveries WHERE status = 'pending' AND next_attempt_at <= now()",
    );
    return Number(rows[0]!.n);
  }
}

const UNITS: [ms: number, one: string, many: string][] = [
  [24 * 3600 * 1000, "day", "days"],
  [3600 * 1000, "hour", "hours"],
  [60 * 1000, "minute", "minutes"],
  [1000, "second", "seconds"],
];

/** A window in the largest unit that divides it: "5 days", "90 minutes", "1500 ms". */
export function describeDuration(ms: number): string {
  for (const [unit, one, many] of UNITS) {
    if (ms >= unit && ms % unit === 0) return ms === unit ? `1 ${one}` : `${ms / unit} ${many}`;
  }
  return `${ms} ms`;
}
