import { inTransaction, type Pool, writeOutbox } from "@herald/runtime";
import { audienceCountQuery, audiencePageQuery, type Audience } from "./audience-query.js";
import { deviceListWhere, type DeviceListFilter } from "./device-list.js";
import { invalidatedEvent, optInChangedEvent, userErasedEvent } from "./device-events.js";
import { batchUpsert, byShape, rowKey, type UpsertKind, upsertRecord } from "./batch-upsert.js";
import { tokenHash, type DevicePlatform } from "./push-token.js";

export interface DeviceRow {
  id: string;
  app_id: string;
  platform: DevicePlatform;
  push_token: string;
  external_id: string | null;
  language: string | null;
  timezone: string | null;
  app_version: string | null;
  tags: string[];
  opted_in: boolean;
  invalid: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface AudienceRow {
  id: string;
  platform: DevicePlatform;
  push_token: string;
  language: string | null;
}

/** Optional fields of a write: undefined keeps the stored value, null clears it. */
export interface DeviceChanges {
  externalId?: string | null;
  language?: string | null;
  timezone?: string | null;
  appVersion?: string | null;
  /** Replaces the tags when given. */
  tags?: string[];
}

export interface Registration extends DeviceChanges {
  appId: string;
  platform: DevicePlatform;
  /** Canonical form (see push-token.ts). */
  pushToken: string;
}

export interface Invalidation {
  deviceId: string;
  observedAt: Date;
  reason: string;
}

/** A device as LookupDevices answers it. */
export interface DeviceRefRow {
  id: string;
  external_id: string | null;
  platform: DevicePlatform;
}

/** What an erasure removed, and what the caller had removed elsewhere (for user.erased). */
export interface Erasure {
  appId: string;
  externalId: string;
  receipts: number;
  engagements: number;
  /** Campaigns whose external_ids target the caller removed the external id from. */
  campaignAudiences: number;
}

/** What an erasure removed from the registry. */
export interface Erased {
  devices: number;
  inAppStates: number;
  /** In-app messages whose external_ids audience named the external id and no longer does. */
  inAppAudiences: number;
}

/** What a bulk import did to one registration. */
export type ImportWrite = "created" | "updated" | "unchanged";

/** What a registration did: its device, and whether the token was new to its app. */
export interface Registered {
  device: DeviceRow;
  created: boolean;
}

export interface DeviceStore {
  register(r: Registration): Promise<Registered>;
  /** Registers many devices (any apps, any tokens) as register() would, in one statement per shape where it can. */
  registerMany(registrations: readonly Registration[]): Promise<Registered[]>;
  /**
   * Registers many devices as register() would, one statement per shape, and writes only
   * those whose values would change; (app, token) pairs must be distinct.
   */
  importDevices(registrations: readonly Registration[]): Promise<ImportWrite[]>;
  get(id: string): Promise<DeviceRow | undefined>;
  /** A page of an app's devices matching the filter, in registration order, and how many match. */
  list(
    appId: string,
    filter: DeviceListFilter,
    offset: number,
    limit: number,
  ): Promise<{ devices: DeviceRow[]; total: number }>;
  update(id: string, changes: DeviceChanges): Promise<DeviceRow | undefined>;
  delete(id: string): Promise<boolean>;
  /** Sets opted_in; a change (only) is announced as device.opted_in / device.opted_out. */
  setOptIn(id: string, optedIn: boolean): Promise<DeviceRow | undefined>;
  /**
   * Marks devices invalid unless already invalid or re-registered after the observation;
   * announces each as device.invalidated; returns how many.
   */
  invalidate(items: readonly Invalidation[]): Promise<number>;
  /** The app's devices among the ids (others' and unknown ids are left out). */
  lookup(appId: string, ids: readonly string[]): Promise<DeviceRefRow[]>;
  /**
   * Deletes the devices of an external id in an app and their in-app message state, and
   * removes the external id from the app's in-app message audiences; when anything was
   * removed (here or, per the counts given, by the caller), announces user.erased.
   */
  eraseUser(erasure: Erasure): Promise<Erased>;
  audiencePage(audience: Audience, afterId: string | undefined, limit: number): Promise<AudienceRow[]>;
  countAudience(audience: Audience): Promise<number>;
  /** Deletes up to `limit` devices of an app; returns how many it deleted. */
  deleteAppDevices(appId: string, limit: number): Promise<number>;
}

const DEVICE_COLUMNS =
  "id, app_id, platform, push_token, external_id, language, timezone, app_version, tags, opted_in, invalid, created_at, updated_at";

const columnsOf = (table: string) =>
  DEVICE_COLUMNS.split(", ")
    .map((c) => `${table}.${c}`)
    .join(", ");

/** registerMany()'s batches: every row is written and returned whole. */
const REGISTER_BATCH: UpsertKind = { name: "register_batch", returning: columnsOf("d"), skipUnchanged: false };
/** importDevices()'s batches: a repeated import changes nothing; the outcome needs no columns. */
const IMPORT: UpsertKind = { name: "import", returning: "d.app_id", skipUnchanged: true };

/** Deadlock, serialization failure: a batch statement lost a race and was rolled back whole. */
const RACE_CODES = new Set(["40P01", "40001"]);
/** How many times an import batch that lost a race is run before the call fails. */
const IMPORT_ATTEMPTS = 3;

// For each optional column: a flag parameter says whether the write sets it.
const keepOrSet = (column: string, flag: number, value: string) =>
  `${column} = CASE WHEN $${flag}::boolean THEN ${value} ELSE devices.${column} END`;

// register()'s statement is prepared, as are the batch upserts (batch-upsert.ts): pg parses
// a named statement once per connection and PostgreSQL plans it from its cache, where a
// plain query is parsed, analysed and planned on every call. A batch of 32 registrations
// cost PostgreSQL 2.8 instead of 3.9–4.9 ms of CPU, an import batch of 1,000 rows 55
// instead of 58–67 ms (docs/operations.md, "Production infrastructure": what a pooler
// must allow).

/** register()'s statement. */
const REGISTER = {
  name: "device_registry.register",
  text: `INSERT INTO devices (app_id, token_hash, push_token, platform, external_id, language, timezone, app_version, tags)
   VALUES ($1, $2, $3, $4, $6, $8, $10, $12, COALESCE($13::text[], '{}'))
   ON CONFLICT (app_id, token_hash) DO UPDATE SET
     push_token = EXCLUDED.push_token,
     platform = EXCLUDED.platform,
     ${keepOrSet("external_id", 5, "EXCLUDED.external_id")},
     ${keepOrSet("language", 7, "EXCLUDED.language")},
     ${keepOrSet("timezone", 9, "EXCLUDED.timezone")},
     ${keepOrSet("app_version", 11, "EXCLUDED.app_version")},
     tags = CASE WHEN $13::text[] IS NULL THEN devices.tags ELSE EXCLUDED.tags END,
     invalid = false, invalid_reason = NULL, invalidated_at = NULL,
     registered_at = now(), updated_at = now()
   RETURNING ${DEVICE_COLUMNS}, (xmax = 0) AS created`,
};

export class PgDeviceStore implements DeviceStore {
  /**
   * @param announced called after a transaction that wrote webhook events to the outbox
   *   committed (the server flushes its OutboxRelay); rows are published later otherwise.
   */
  constructor(
    private readonly pool: Pool,
    private readonly announced: () => void = () => undefined,
  ) {}

  async registerMany(registrations: readonly Registration[]): Promise<Registered[]> {
    const out: (Registered | undefined)[] = new Array(registrations.length);
    // A token twice in one statement would be written once: later ones go one by one, in order.
    const seen = new Set<string>();
    const first: number[] = [];
    registrations.forEach((r, i) => {
      const key = rowKey(r.appId, r.pushToken);
      if (!seen.has(key)) first.push(i);
      seen.add(key);
    });
    const groups = [...byShape(registrations, first)].filter(([, group]) => group.length > 1);
    await Promise.all(
      groups.map(async ([shape, group]) => {
        const rows = await this.upsertBatch<DeviceRow & { token_hash: string; created: boolean }>(
          REGISTER_BATCH,
          shape,
          group.map((i) => registrations[i]!),
        );
        rows?.forEach(({ i, row: { token_hash, created, ...device } }) => {
          out[group[i]!] = { device, created };
        });
      }),
    );
    // Single registrations, repeated tokens, and batches that lost a race: the exact
    // single-row upsert.
    for (let i = 0; i < registrations.length; i++) out[i] ??= await this.register(registrations[i]!);
    return out as Registered[];
  }

  /**
   * One batch upsert of registrations of one shape (batch-upsert.ts): each returned row
   * with the index of its registration. Undefined when the statement lost a race
   * (deadlock): the caller writes its rows one by one.
   */
  private async upsertBatch<Row extends { app_id: string; token_hash: string; created: boolean }>(
    kind: UpsertKind,
    shape: number,
    registrations: readonly Registration[],
  ): Promise<{ i: number; row: Row }[] | undefined> {
    const input = registrations.map(upsertRecord);
    let rows: Row[];
    try {
      ({ rows } = await this.pool.query<Row>({
        ...batchUpsert(kind, shape),
        values: [JSON.stringify(input)],
      }));
    } catch (err) {
      if (RACE_CODES.has((err as { code?: string }).code ?? "")) return undefined;
      throw err;
    }
    const indexOf = new Map(input.map((x, i) => [rowKey(x.a, x.h), i]));
    return rows.map((row) => ({ i: indexOf.get(rowKey(row.app_id, row.token_hash))!, row }));
  }

  async register(r: Registration): Promise<Registered> {
    // One statement, so concurrent registrations of one token converge on one row;
    // xmax = 0 only on the row version an INSERT created.
    const { rows } = await this.pool.query<DeviceRow & { created: boolean }>({
      ...REGISTER,
      values: [r.appId, tokenHash(r.pushToken), r.pushToken, r.platform, ...changeParams(r)],
    });
    const { created, ...device } = rows[0]!;
    return { device, created };
  }

  async importDevices(registrations: readonly Registration[]): Promise<ImportWrite[]> {
    const out: ImportWrite[] = registrations.map(() => "unchanged");
    for (const [shape, group] of byShape(registrations, registrations.keys())) {
      const batch = group.map((i) => registrations[i]!);
      // A batch that lost a race (deadlock with a concurrent write of its tokens) was
      // rolled back whole: it is run again, a few times.
      let rows = await this.upsertBatch(IMPORT, shape, batch);
      for (let attempt = 1; !rows; attempt++) {
        if (attempt === IMPORT_ATTEMPTS)
          throw new Error(`import batch lost to concurrent writes of its tokens ${attempt} times`);
        rows = await this.upsertBatch(IMPORT, shape, batch);
      }
      for (const { i, row } of rows) out[group[i]!] = row.created ? "created" : "updated";
    }
    return out;
  }

  async get(id: string): Promise<DeviceRow | undefined> {
    const { rows } = await this.pool.query<DeviceRow>(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE id = $1`, [id]);
    return rows[0];
  }

  async list(
    appId: string,
    filter: DeviceListFilter,
    offset: number,
    limit: number,
  ): Promise<{ devices: DeviceRow[]; total: number }> {
    const { where, values } = deviceListWhere(appId, filter);
    const n = values.length;
    // The page's ids come from an index-only walk; only its rows are read from the table.
    const [page, count] = await Promise.all([
      this.pool.query<DeviceRow>(
        `SELECT ${columnsOf("d")} FROM devices d
         JOIN (SELECT id FROM devices WHERE ${where} ORDER BY created_at, id OFFSET $${n + 1} LIMIT $${n + 2}) p
           ON p.id = d.id
         ORDER BY d.created_at, d.id`,
        [...values, offset, limit],
      ),
      this.pool.query<{ total: string }>(`SELECT count(*) AS total FROM devices WHERE ${where}`, values),
    ]);
    return { devices: page.rows, total: Number(count.rows[0]!.total) };
  }

  async update(id: string, changes: DeviceChanges): Promise<DeviceRow | undefined> {
    const { rows } = await this.pool.query<DeviceRow>(
      `UPDATE devices SET
         ${keepOrSet("external_id", 2, "$3")},
         ${keepOrSet("language", 4, "$5")},
         ${keepOrSet("timezone", 6, "$7")},
         ${keepOrSet("app_version", 8, "$9")},
         tags = COALESCE($10::text[], devices.tags),
         updated_at = now()
       WHERE id = $1
       RETURNING ${DEVICE_COLUMNS}`,
      [id, ...changeParams(changes)],
    );
    return rows[0];
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM devices WHERE id = $1", [id]);
    return (rowCount ?? 0) > 0;
  }

  async setOptIn(id: string, optedIn: boolean): Promise<DeviceRow | undefined> {
    const result = await inTransaction(this.pool, async (client) => {
      // The value before the update, locked first: of two concurrent calls setting the
      // same value, the second reads the first's result and announces nothing.
      const { rows } = await client.query<DeviceRow & { was: boolean }>(
        `UPDATE devices d SET opted_in = $2, updated_at = now()
         FROM (SELECT id, opted_in FROM devices WHERE id = $1 FOR UPDATE) old
         WHERE d.id = old.id
         RETURNING ${columnsOf("d")}, old.opted_in AS was`,
        [id, optedIn],
      );
      if (rows.length === 0) return undefined;
      const { was, ...device } = rows[0]!;
      const changed = was !== device.opted_in;
      if (changed) await writeOutbox(client, [optInChangedEvent(device, device.updated_at)]);
      return { device, changed };
    });
    if (result?.changed) this.announced();
    return result?.device;
  }

  async invalidate(items: readonly Invalidation[]): Promise<number> {
    if (items.length === 0) return 0;
    const invalidated = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{
        id: string;
        app_id: string;
        platform: DevicePlatform;
        external_id: string | null;
        reason: string;
        observed_at: Date;
        invalidated_at: Date;
      }>(
        `UPDATE devices d
           SET invalid = true, invalid_reason = v.reason, invalidated_at = now(), updated_at = now()
         FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]) AS v(id, observed_at, reason)
         WHERE d.id = v.id AND NOT d.invalid AND d.registered_at <= v.observed_at
         RETURNING d.id, d.app_id, d.platform, d.external_id, v.reason, v.observed_at, d.invalidated_at`,
        [items.map((i) => i.deviceId), items.map((i) => i.observedAt), items.map((i) => i.reason)],
      );
      // One INSERT for the whole batch.
      await writeOutbox(client, rows.map(invalidatedEvent));
      return rows.length;
    });
    if (invalidated > 0) this.announced();
    return invalidated;
  }

  /**
   * A primary-key probe per id, whatever the statistics say: written as `app_id = $1 AND
   * id = ANY($2)`, a table without fresh statistics (a bulk load before ANALYZE, or
   * autovacuum off) was planned as a bitmap AND with the app's whole listing index, a
   * million index entries read for a thousand ids (0.9 s instead of 6 ms; the export's
   * lookups spent 100 s of PostgreSQL CPU per million receipts that way).
   */
  async lookup(appId: string, ids: readonly string[]): Promise<DeviceRefRow[]> {
    const { rows } = await this.pool.query<DeviceRefRow>(
      `SELECT d.id, d.external_id, d.platform FROM unnest($2::uuid[]) AS q (id)
       JOIN devices d ON d.id = q.id WHERE d.app_id = $1`,
      [appId, ids],
    );
    return rows;
  }

  async eraseUser(erasure: Erasure): Promise<Erased> {
    const { appId, externalId, receipts, engagements, campaignAudiences } = erasure;
    const erased = await inTransaction(this.pool, async (client) => {
      // The devices are locked first, so that no in-app state can be added to one of them
      // between the two deletions (its foreign key waits, then finds the device gone).
      const { rows } = await client.query<{ devices: string; in_app_states: string; in_app_audiences: string }>(
        `WITH gone AS (SELECT id FROM devices WHERE app_id = $1 AND external_id = $2 FOR UPDATE),
           states AS (DELETE FROM in_app_message_devices WHERE device_id IN (SELECT id FROM gone) RETURNING 1),
           removed AS (DELETE FROM devices WHERE id IN (SELECT id FROM gone) RETURNING 1),
           -- A message left with no external id matches no device (= ANY of an empty array).
           audiences AS (
             UPDATE in_app_messages SET external_ids = array_remove(external_ids, $2), updated_at = now()
             WHERE app_id = $1 AND audience_kind = 'external_ids' AND $2 = ANY (external_ids)
             RETURNING 1)
         SELECT (SELECT count(*) FROM removed) AS devices, (SELECT count(*) FROM states) AS in_app_states,
                (SELECT count(*) FROM audiences) AS in_app_audiences`,
        [appId, externalId],
      );
      const out = {
        devices: Number(rows[0]!.devices),
        inAppStates: Number(rows[0]!.in_app_states),
        inAppAudiences: Number(rows[0]!.in_app_audiences),
      };
      const audiences = campaignAudiences + out.inAppAudiences;
      const announce = out.devices > 0 || receipts > 0 || engagements > 0 || audiences > 0;
      if (announce) await writeOutbox(client, [userErasedEvent({ ...erasure, ...out, audiences }, new Date())]);
      return { ...out, announce };
    });
    if (erased.announce) this.announced();
    return { devices: erased.devices, inAppStates: erased.inAppStates, inAppAudiences: erased.inAppAudiences };
  }

  async audiencePage(audience: Audience, afterId: string | undefined, limit: number): Promise<AudienceRow[]> {
    const q = audiencePageQuery(audience, afterId, limit);
    return (await this.pool.query<AudienceRow>(q.text, q.values)).rows;
  }

  async countAudience(audience: Audience): Promise<number> {
    const q = audienceCountQuery(audience);
    return Number((await this.pool.query<{ count: string }>(q.text, q.values)).rows[0]!.count);
  }

  async deleteAppDevices(appId: string, limit: number): Promise<number> {
    // Ordered like the (app_id, token_hash) index so that every batch is an index range,
    // never a sequential scan that rereads the rows earlier batches left dead.
    const { rowCount } = await this.pool.query(
      "DELETE FROM devices WHERE id IN (SELECT id FROM devices WHERE app_id = $1 ORDER BY token_hash LIMIT $2)",
      [appId, limit],
    );
    return rowCount ?? 0;
  }
}

/** The (flag, value) parameter pairs of the optional columns, then the tags. */
function changeParams(c: DeviceChanges): unknown[] {
  const pair = (v: string | null | undefined) => [v !== undefined, v ?? null];
  return [...pair(c.externalId), ...pair(c.language), ...pair(c.timezone), ...pair(c.appVersion), c.tags ?? null];
}
