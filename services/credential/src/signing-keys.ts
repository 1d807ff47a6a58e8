import { createHash, generateKeyPairSync, type JsonWebKey } from "node:crypto";
import { inTransaction, type Logger, type Pool, type PoolClient } from "@herald/runtime";
import { SealedBoxError, type SealedBox } from "@herald/runtime";

export interface SigningKey {
  kid: string;
  /** The private JWK as JSON, alg ES256. */
  privateJwk: string;
  active: boolean;
  createdAt: Date;
  retiredAt: Date | null;
}

export interface SigningKeyPolicy {
  /** The active key is replaced once it is this old. */
  rotationDays: number;
  /** A retired key is still handed out (to verify the tokens it signed) for this long. */
  retentionHours: number;
}

interface KeyRow {
  kid: string;
  sealed: Buffer;
  keyVersion: number;
  createdAt: Date;
  retiredAt: Date | null;
  /** Active and older than the rotation period. */
  due: boolean;
}

/** RFC 7638: SHA-256 over the required members of the public key, in lexicographic order. */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash("sha256").update(canonical, "utf8").digest("base64url");
}

/** A fresh ES256 (P-256) key as a private JWK whose kid is its thumbprint. */
export function generateSigningKey(): { kid: string; privateJwk: string } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  const kid = jwkThumbprint(jwk);
  return { kid, privateJwk: JSON.stringify({ ...jwk, kid, alg: "ES256", use: "sig" }) };
}

/** Binds a sealed key to its kid: a blob copied to another row fails to open. */
export const signingKeySealContext = (kid: string) => `signing-key:${kid}`;

/**
 * The token signing keys in PostgreSQL, sealed with the master key. `keys()` is cheap
 * when all is well (one read); otherwise it repairs the set under a transaction-level
 * advisory lock, so replicas asking at once create one key between them (the partial
 * unique index on active keys backs that up).
 */
export class SigningKeyStore {
  constructor(
    private readonly pool: Pool,
    private readonly sealedBox: SealedBox,
    private readonly policy: SigningKeyPolicy,
    private readonly log: Logger,
  ) {}

  async keys(): Promise<SigningKey[]> {
    const rows = await this.read(this.pool);
    const active = rows.find((r) => r.retiredAt === null);
    if (active && !active.due && this.open(active)) return this.usable(rows);
    return inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('herald.signing_keys.' || current_schema()))");
      return this.usable(await this.repair(client, await this.read(client)));
    });
  }

  /** Retires an active key that is due or unreadable and makes a new one; returns the rows after. */
  private async repair(client: PoolClient, rows: KeyRow[]): Promise<KeyRow[]> {
    const active = rows.find((r) => r.retiredAt === null);
    if (active && !active.due && this.open(active)) return rows;
    if (active) {
      if (active.due) this.log.info({ kid: active.kid }, "signing key rotated");
      else {
        this.log.warn(
          { kid: active.kid, keyVersion: active.keyVersion },
          "signing key cannot be decrypted with any configured master key; retired and replaced",
        );
      }
      await client.query("UPDATE signing_keys SET retired_at = now() WHERE kid = $1", [active.kid]);
    }
    const key = generateSigningKey();
    await client.query("INSERT INTO signing_keys (kid, sealed, key_version) VALUES ($1, $2, $3)", [
      key.kid,
      this.sealedBox.seal(key.privateJwk, signingKeySealContext(key.kid)),
      this.sealedBox.keyVersion,
    ]);
    this.log.info({ kid: key.kid }, "signing key created");
    return this.read(client);
  }

  /** The active key and the retired ones still within the retention period, newest first. */
  private async read(client: Pool | PoolClient): Promise<KeyRow[]> {
    const { rows } = await client.query<KeyRow>(
      `SELECT kid, sealed, key_version AS "keyVersion", created_at AS "createdAt", retired_at AS "retiredAt",
         (retired_at IS NULL AND created_at <= now() - make_interval(days => $1)) AS due
       FROM signing_keys WHERE retired_at IS NULL OR retired_at > now() - make_interval(hours => $2)
       ORDER BY retired_at IS NULL DESC, created_at DESC`,
      [this.policy.rotationDays, this.policy.retentionHours],
    );
    return rows;
  }

  /** The private JWK, or undefined when no configured master key opens it. */
  private open(row: KeyRow): string | undefined {
    try {
      return this.sealedBox.open(row.sealed, signingKeySealContext(row.kid), row.keyVersion);
    } catch (err) {
      if (err instanceof SealedBoxError) return undefined;
      throw err;
    }
  }

  /** Retired keys no configured master key opens are useless for verifying and are left out. */
  private usable(rows: KeyRow[]): SigningKey[] {
    return rows.flatMap((row) => {
      const privateJwk = this.open(row);
      if (privateJwk === undefined) return [];
      return [
        {
          kid: row.kid,
          privateJwk,
          active: row.retiredAt === null,
          createdAt: row.createdAt,
          retiredAt: row.retiredAt,
        },
      ];
    });
  }
}
