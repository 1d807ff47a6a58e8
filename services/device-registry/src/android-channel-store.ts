import { isUniqueViolation, type Pool } from "@herald/runtime";

export type Importance = "min" | "low" | "default" | "high" | "max";

export interface ChannelRow {
  app_id: string;
  id: string;
  name: string;
  description: string;
  importance: Importance;
  sound: string | null;
  vibration: boolean;
  vibration_pattern: number[];
  lights: boolean;
  light_color: string | null;
  badge: boolean;
  group_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The writable columns; an update changes only those present. */
export type ChannelFields = Partial<Omit<ChannelRow, "app_id" | "id" | "created_at" | "updated_at">>;

export type ChannelCreate = { ok: true; channel: ChannelRow } | { ok: false; reason: "exists" | "limit" };

export interface AndroidChannelStore {
  /** Refuses when the app has `limit` channels already. */
  create(appId: string, id: string, fields: ChannelFields & { name: string }, limit: number): Promise<ChannelCreate>;
  get(appId: string, id: string): Promise<ChannelRow | undefined>;
  /** Every channel of the app, ordered by id. */
  list(appId: string): Promise<ChannelRow[]>;
  update(appId: string, id: string, fields: ChannelFields): Promise<ChannelRow | undefined>;
  delete(appId: string, id: string): Promise<boolean>;
  deleteAppChannels(appId: string): Promise<number>;
}

const COLUMNS = [
  "name",
  "description",
  "importance",
  "sound",
  "vibration",
  "vibration_pattern",
  "lights",
  "light_color",
  "badge",
  "group_id",
] as const satisfies readonly (keyof ChannelFields)[];

export class PgAndroidChannelStore implements AndroidChannelStore {
  constructor(private readonly pool: Pool) {}

  async create(appId: string, id: string, fields: ChannelFields & { name: string }, limit: number) {
    const set = COLUMNS.filter((c) => fields[c] !== undefined);
    const values = set.map((c) => fields[c]);
    // The count and the insert in one statement; a race past the limit by one is harmless.
    const sql = `INSERT INTO android_channels (app_id, id, ${set.join(", ")})
      SELECT $1, $2, ${set.map((_, i) => `$${i + 4}`).join(", ")}
      WHERE (SELECT count(*) FROM android_channels WHERE app_id = $1) < $3
      RETURNING *`;
    try {
      const { rows } = await this.pool.query<ChannelRow>(sql, [appId, id, limit, ...values]);
      return rows[0] ? ({ ok: true, channel: rows[0] } as const) : ({ ok: false, reason: "limit" } as const);
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: "exists" } as const;
      throw err;
    }
  }

  async get(appId: string, id: string) {
    const { rows } = await this.pool.query<ChannelRow>("SELECT * FROM android_channels WHERE app_id = $1 AND id = $2", [
      appId,
      id,
    ]);
    return rows[0];
  }

  async list(appId: string) {
    const { rows } = await this.pool.query<ChannelRow>(
      'SELECT * FROM android_channels WHERE app_id = $1 ORDER BY id COLLATE "C"',
      [appId],
    );
    return rows;
  }

  async update(appId: string, id: string, fields: ChannelFields) {
    const set = COLUMNS.filter((c) => fields[c] !== undefined);
    const assignments = [...set.map((c, i) => `${c} = $${i + 3}`), "updated_at = now()"];
    const { rows } = await this.pool.query<ChannelRow>(
      `UPDATE android_channels SET ${assignments.join(", ")} WHERE app_id = $1 AND id = $2 RETURNING *`,
      [appId, id, ...set.map((c) => fields[c])],
    );
    return rows[0];
  }

  async delete(appId: string, id: string) {
    const res = await this.pool.query("DELETE FROM android_channels WHERE app_id = $1 AND id = $2", [appId, id]);
    return (res.rowCount ?? 0) > 0;
  }

  async deleteAppChannels(appId: string) {
    const res = await this.pool.query("DELETE FROM android_channels WHERE app_id = $1", [appId]);
    return res.rowCount ?? 0;
  }
}
