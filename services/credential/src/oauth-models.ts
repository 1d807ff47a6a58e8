import type { Pool } from "@herald/runtime";

/**
 * The authorization server's models (oidc-provider's adapter interface), keyed by kind
 * and id. Every read filters on expires_at, so a row the cleanup has not reached yet is
 * already gone for the caller. Consumed rows stay readable with consumed_at set: that is
 * how oidc-provider detects a reused authorization code or refresh token.
 */

export interface OAuthModel {
  kind: string;
  id: string;
  /** JSON text, opaque here. */
  payload: string;
  /** null: never expires. */
  expiresAt: Date | null;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
}

export interface FoundModel {
  payload: string;
  consumedAt: Date | null;
}

export type ModelKey = { by: "id" | "uid" | "user_code"; value: string };

const LIVE = "(expires_at IS NULL OR expires_at > now())";

export class OAuthModelStore {
  constructor(private readonly pool: Pool) {}

  /** Inserts or replaces the model; replacing keeps consumed_at as it was. */
  async upsert(model: OAuthModel): Promise<void> {
    await this.pool.query(
      `INSERT INTO oauth_models (kind, id, payload, expires_at, grant_id, uid, user_code)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at,
         grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid, user_code = EXCLUDED.user_code`,
      [model.kind, model.id, model.payload, model.expiresAt, model.grantId, model.uid, model.userCode],
    );
  }

  async find(kind: string, key: ModelKey): Promise<FoundModel | undefined> {
    // The column comes from a closed set, never from the request.
    const column = key.by;
    const { rows } = await this.pool.query<{ payload: unknown; consumedAt: Date | null }>(
      `SELECT payload, consumed_at AS "consumedAt" FROM oauth_models
       WHERE kind = $1 AND ${column} = $2 AND ${LIVE} LIMIT 1`,
      [kind, key.value],
    );
    const row = rows[0];
    return row && { payload: JSON.stringify(row.payload), consumedAt: row.consumedAt };
  }

  /** Sets consumed_at once; consuming again keeps the first time. */
  async consume(kind: string, id: string): Promise<void> {
    await this.pool.query(
      "UPDATE oauth_models SET consumed_at = now() WHERE kind = $1 AND id = $2 AND consumed_at IS NULL",
      [kind, id],
    );
  }

  async destroy(kind: string, id: string): Promise<void> {
    await this.pool.query("DELETE FROM oauth_models WHERE kind = $1 AND id = $2", [kind, id]);
  }

  /** Every model of the grant, whatever its kind: codes, refresh and access tokens, the grant. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.pool.query("DELETE FROM oauth_models WHERE grant_id = $1", [grantId]);
  }
}
