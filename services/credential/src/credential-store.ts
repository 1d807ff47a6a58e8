import { inTransaction, isUniqueViolation, type OutboxEvent, type Pool, writeOutbox } from "@herald/runtime";
import type { ApiKeyKindName } from "./api-key-secret.js";
import type { PlatformName, PublicData } from "./platform-credentials.js";

export type KeyScopeName = "org" | "app";

export interface AppRecord {
  id: string;
  orgId: string;
  name: string;
  platform: PlatformName;
  bundleId: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  /** The app the key was created under; null for the bootstrap key and after the app is gone. */
  appId: string | null;
  scope: KeyScopeName;
  kind: ApiKeyKindName;
  name: string;
  prefix: string;
  /** null: the service default of the key's kind. */
  rateLimitPerMinute: number | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface NewApiKey {
  orgId: string;
  appId: string | null;
  scope: KeyScopeName;
  kind: ApiKeyKindName;
  name: string;
  prefix: string;
  secretHash: Buffer;
  rateLimitPerMinute: number | null;
}

export interface PlatformConfigRecord {
  appId: string;
  platform: PlatformName;
  publicData: PublicData;
  sealed: Buffer;
  keyVersion: number;
  fingerprint: string;
  updatedAt: Date;
}

export interface PageQuery {
  limit: number;
  offset: number;
}

export type CreateAppResult = { ok: true; app: AppRecord } | { ok: false; reason: "bundle_id_taken" | "org_not_found" };
export type UpdateAppResult = { ok: true; app: AppRecord } | { ok: false; reason: "bundle_id_taken" | "not_found" };

export interface CredentialStore {
  /** Inserts the key unless one with the same secret hash exists. True when inserted. */
  ensureApiKey(key: NewApiKey): Promise<boolean>;

  createApp(app: Pick<AppRecord, "orgId" | "name" | "platform" | "bundleId">): Promise<CreateAppResult>;
  getApp(id: string): Promise<AppRecord | undefined>;
  listApps(
    orgId: string,
    onlyAppId: string | undefined,
    page: PageQuery,
  ): Promise<{ apps: AppRecord[]; total: number }>;
  updateApp(id: string, patch: Partial<Pick<AppRecord, "name" | "platform" | "bundleId">>): Promise<UpdateAppResult>;
  /** Deletes the app with its app-scoped keys and configs and queues the event, atomically. */
  deleteApp(id: string, event: OutboxEvent): Promise<boolean>;

  /** undefined when the app was deleted meanwhile. */
  createApiKey(key: NewApiKey): Promise<ApiKeyRecord | undefined>;
  /** The key with this secret hash, with the stored hash (verifyApiKey re-checks it in constant time). */
  findActiveApiKey(secretHash: Buffer): Promise<(ApiKeyRecord & { secretHash: Buffer }) | undefined>;
  listApiKeys(appId: string, page: PageQuery): Promise<{ keys: ApiKeyRecord[]; total: number }>;
  revokeApiKey(appId: string, keyId: string): Promise<boolean>;

  /** Inserts or replaces the app's config of that platform; undefined when the app was deleted meanwhile. */
  putPlatformConfig(config: Omit<PlatformConfigRecord, "updatedAt">): Promise<PlatformConfigRecord | undefined>;
  getPlatformConfigs(appId: string): Promise<PlatformConfigRecord[]>;
  getPlatformConfig(appId: string, platform: PlatformName): Promise<PlatformConfigRecord | undefined>;
}

// Aliased so that rows come back in the record shapes above, with no mapping code.
const APP_COLUMNS = `id, org_id AS "orgId", name, platform, bundle_id AS "bundleId",
  created_at AS "createdAt", updated_at AS "updatedAt"`;
const KEY_COLUMNS = `id, org_id AS "orgId", app_id AS "appId", scope, kind, name, prefix,
  rate_limit_per_minute AS "rateLimitPerMinute", created_at AS "createdAt", revoked_at AS "revokedAt"`;
const CONFIG_COLUMNS = `app_id AS "appId", platform, public_data AS "publicData", sealed,
  key_version AS "keyVersion", fingerprint, updated_at AS "updatedAt"`;

const isForeignKeyViolation = (err: unknown) => (err as { code?: string } | null)?.code === "23503";

export class PostgresCredentialStore implements CredentialStore {
  constructor(private readonly pool: Pool) {}

  async ensureApiKey(key: NewApiKey): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO api_keys (org_id, app_id, scope, kind, name, prefix, secret_hash, rate_limit_per_minute)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (secret_hash) DO NOTHING`,
      [key.orgId, key.appId, key.scope, key.kind, key.name, key.prefix, key.secretHash, key.rateLimitPerMinute],
    );
    return rowCount === 1;
  }

  async createApp(app: Pick<AppRecord, "orgId" | "name" | "platform" | "bundleId">): Promise<CreateAppResult> {
    try {
      const { rows } = await this.pool.query<AppRecord>(
        `INSERT INTO apps (org_id, name, platform, bundle_id) VALUES ($1, $2, $3, $4) RETURNING ${APP_COLUMNS}`,
        [app.orgId, app.name, app.platform, app.bundleId],
      );
      return { ok: true, app: rows[0]! };
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: "bundle_id_taken" };
      if (isForeignKeyViolation(err)) return { ok: false, reason: "org_not_found" };
      throw err;
    }
  }

  async getApp(id: string): Promise<AppRecord | undefined> {
    const { rows } = await this.pool.query<AppRecord>(`SELECT ${APP_COLUMNS} FROM apps WHERE id = $1`, [id]);
    return rows[0];
  }

  async listApps(orgId: string, onlyAppId: string | undefined, page: PageQuery) {
    const filter = "org_id = $1 AND ($2::uuid IS NULL OR id = $2::uuid)";
    const [list, count] = await Promise.all([
      this.pool.query<AppRecord>(
        `SELECT ${APP_COLUMNS} FROM apps WHERE ${filter} ORDER BY created_at, id LIMIT $3 OFFSET $4`,
        [orgId, onlyAppId ?? null, page.limit, page.offset],
      ),
      this.pool.query<{ total: string }>(`SELECT count(*) AS total FROM apps WHERE ${filter}`, [
        orgId,
        onlyAppId ?? null,
      ]),
    ]);
    return { apps: list.rows, total: Number(count.rows[0]!.total) };
  }

  async updateApp(
    id: string,
    patch: Partial<Pick<AppRecord, "name" | "platform" | "bundleId">>,
  ): Promise<UpdateAppResult> {
    try {
      const { rows } = await this.pool.query<AppRecord>(
        `UPDATE apps SET name = COALESCE($2, name), platform = COALESCE($3, platform),
           bundle_id = COALESCE($4, bundle_id), updated_at = clock_timestamp()
         WHERE id = $1 RETURNING ${APP_COLUMNS}`,
        [id, patch.name ?? null, patch.platform ?? null, patch.bundleId ?? null],
      );
      return rows[0] ? { ok: true, app: rows[0] } : { ok: false, reason: "not_found" };
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: "bundle_id_taken" };
      throw err;
    }
  }

  deleteApp(id: string, event: OutboxEvent): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      // App-scoped keys go with their app; the foreign key clears app_id on org-scoped ones.
      await client.query("DELETE FROM api_keys WHERE app_id = $1 AND scope = 'app'", [id]);
      const { rowCount } = await client.query("DELETE FROM apps WHERE id = $1", [id]);
      if (rowCount === 0) return false;
      await writeOutbox(client, [event]);
      return true;
    });
  }

  async createApiKey(key: NewApiKey): Promise<ApiKeyRecord | undefined> {
    try {
      const { rows } = await this.pool.query<ApiKeyRecord>(
        `INSERT INTO api_keys (org_id, app_id, scope, kind, name, prefix, secret_hash, rate_limit_per_minute)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
        [key.orgId, key.appId, key.scope, key.kind, key.name, key.prefix, key.secretHash, key.rateLimitPerMinute],
      );
      return rows[0];
    } catch (err) {
      if (isForeignKeyViolation(err)) return undefined;
      throw err;
    }
  }

  async findActiveApiKey(secretHash: Buffer): Promise<(ApiKeyRecord & { secretHash: Buffer }) | undefined> {
    const { rows } = await this.pool.query<ApiKeyRecord & { secretHash: Buffer }>(
      `SELECT ${KEY_COLUMNS}, secret_hash AS "secretHash" FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL`,
      [secretHash],
    );
    return rows[0];
  }

  async listApiKeys(appId: string, page: PageQuery) {
    const [list, count] = await Promise.all([
      this.pool.query<ApiKeyRecord>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE app_id = $1 AND revoked_at IS NULL
         ORDER BY created_at, id LIMIT $2 OFFSET $3`,
        [appId, page.limit, page.offset],
      ),
      this.pool.query<{ total: string }>(
        "SELECT count(*) AS total FROM api_keys WHERE app_id = $1 AND revoked_at IS NULL",
        [appId],
      ),
    ]);
    return { keys: list.rows, total: Number(count.rows[0]!.total) };
  }

  async revokeApiKey(appId: string, keyId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND app_id = $2 AND revoked_at IS NULL",
      [keyId, appId],
    );
    return rowCount === 1;
  }

  async putPlatformConfig(config: Omit<PlatformConfigRecord, "updatedAt">): Promise<PlatformConfigRecord | undefined> {
    try {
      const { rows } = await this.pool.query<PlatformConfigRecord>(
        `INSERT INTO platform_configs (app_id, platform, public_data, sealed, key_version, fingerprint)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (app_id, platform) DO UPDATE SET public_data = EXCLUDED.public_data,
           sealed = EXCLUDED.sealed, key_version = EXCLUDED.key_version,
           fingerprint = EXCLUDED.fingerprint, updated_at = now()
         RETURNING ${CONFIG_COLUMNS}`,
        [
          config.appId,
          config.platform,
          JSON.stringify(config.publicData),
          config.sealed,
          config.keyVersion,
          config.fingerprint,
        ],
      );
      return rows[0];
    } catch (err) {
      if (isForeignKeyViolation(err)) return undefined;
      throw err;
    }
  }

  async getPlatformConfigs(appId: string): Promise<PlatformConfigRecord[]> {
    const { rows } = await this.pool.query<PlatformConfigRecord>(
      `SELECT ${CONFIG_COLUMNS} FROM platform_configs WHERE app_id = $1 ORDER BY platform`,
      [appId],
    );
    return rows;
  }

  async getPlatformConfig(appId: string, platform: PlatformName): Promise<PlatformConfigRecord | undefined> {
    const { rows } = await this.pool.query<PlatformConfigRecord>(
      `SELECT ${CONFIG_COLUMNS} FROM platform_configs WHERE app_id = $1 AND platform = $2`,
      [appId, platform],
    );
    return rows[0];
  }
}
