import { isUniqueViolation, type Pool } from "@herald/runtime";
import type { SegmentCriteria } from "./audience-query.js";
import type { DevicePlatform } from "./push-token.js";

export interface SegmentRow {
  id: string;
  app_id: string;
  name: string;
  rule: SegmentCriteria;
  created_at: Date;
  updated_at: Date;
}

export type SegmentWrite = { ok: true; segment: SegmentRow } | { ok: false; reason: "name_taken" | "not_found" };

export interface SegmentStore {
  create(appId: string, name: string, rule: SegmentCriteria): Promise<SegmentWrite>;
  get(id: string): Promise<SegmentRow | undefined>;
  list(appId: string, offset: number, limit: number): Promise<{ segments: SegmentRow[]; total: number }>;
  /** Unset fields are kept. */
  update(id: string, changes: { name?: string; rule?: SegmentCriteria }): Promise<SegmentWrite>;
  delete(id: string): Promise<boolean>;
  /** Deletes every segment of an app; returns how many. */
  deleteAppSegments(appId: string): Promise<number>;
}

/**
 * The stored form of a rule: snake_case like the API, platform names as on devices.
 * Lists missing from a document read as empty, so a later rule part needs no rewrite.
 */
export interface StoredRule {
  tags_any?: string[];
  tags_all?: string[];
  tags_none?: string[];
  platforms?: DevicePlatform[];
  languages?: string[];
  app_versions?: string[];
  timezones?: string[];
  has_external_id?: boolean;
}

type StoredRow = Omit<SegmentRow, "rule"> & { rule: StoredRule };

const SEGMENT_COLUMNS = "id, app_id, name, rule, created_at, updated_at";

export class PgSegmentStore implements SegmentStore {
  constructor(private readonly pool: Pool) {}

  async create(appId: string, name: string, rule: SegmentCriteria): Promise<SegmentWrite> {
    return this.write(`INSERT INTO segments (app_id, name, rule) VALUES ($1, $2, $3) RETURNING ${SEGMENT_COLUMNS}`, [
      appId,
      name,
      toStoredRule(rule),
    ]);
  }

  async get(id: string): Promise<SegmentRow | undefined> {
    const { rows } = await this.pool.query<StoredRow>(`SELECT ${SEGMENT_COLUMNS} FROM segments WHERE id = $1`, [id]);
    return rows[0] && fromStored(rows[0]);
  }

  async list(appId: string, offset: number, limit: number): Promise<{ segments: SegmentRow[]; total: number }> {
    const [page, count] = await Promise.all([
      this.pool.query<StoredRow>(
        `SELECT ${SEGMENT_COLUMNS} FROM segments WHERE app_id = $1 ORDER BY created_at, id OFFSET $2 LIMIT $3`,
        [appId, offset, limit],
      ),
      this.pool.query<{ total: string }>("SELECT count(*) AS total FROM segments WHERE app_id = $1", [appId]),
    ]);
    return { segments: page.rows.map(fromStored), total: Number(count.rows[0]!.total) };
  }

  async update(id: string, changes: { name?: string; rule?: SegmentCriteria }): Promise<SegmentWrite> {
    return this.write(
      `UPDATE segments SET name = COALESCE($2, name), rule = COALESCE($3::jsonb, rule), updated_at = now()
       WHERE id = $1 RETURNING ${SEGMENT_COLUMNS}`,
      [id, changes.name ?? null, changes.rule ? toStoredRule(changes.rule) : null],
    );
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM segments WHERE id = $1", [id]);
    return (rowCount ?? 0) > 0;
  }

  async deleteAppSegments(appId: string): Promise<number> {
    const { rowCount } = await this.pool.query("DELETE FROM segments WHERE app_id = $1", [appId]);
    return rowCount ?? 0;
  }

  /** An INSERT or UPDATE returning the row; the (app_id, name) key turns into name_taken. */
  private async write(text: string, values: unknown[]): Promise<SegmentWrite> {
    try {
      const { rows } = await this.pool.query<StoredRow>(text, values);
      return rows[0] ? { ok: true, segment: fromStored(rows[0]) } : { ok: false, reason: "not_found" };
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: "name_taken" };
      throw err;
    }
  }
}

export function toStoredRule(rule: SegmentCriteria): StoredRule {
  return {
    tags_any: [...rule.tagsAny],
    tags_all: [...rule.tagsAll],
    tags_none: [...rule.tagsNone],
    platforms: [...rule.platforms],
    languages: [...rule.languages],
    app_versions: [...rule.appVersions],
    timezones: [...rule.timezones],
    ...(rule.hasExternalId === undefined ? {} : { has_external_id: rule.hasExternalId }),
  };
}

export function fromStoredRule(rule: StoredRule): SegmentCriteria {
  return {
    tagsAny: rule.tags_any ?? [],
    tagsAll: rule.tags_all ?? [],
    tagsNone: rule.tags_none ?? [],
    platforms: rule.platforms ?? [],
    languages: rule.languages ?? [],
    appVersions: rule.app_versions ?? [],
    timezones: rule.timezones ?? [],
    hasExternalId: rule.has_external_id,
  };
}

const fromStored = ({ rule, ...row }: StoredRow): SegmentRow => ({ ...row, rule: fromStoredRule(rule) });
