import { createHash, randomBytes } from "node:crypto";
import { inTransaction, type Pool, type PoolClient } from "@herald/runtime";
import type { RoleName } from "./member-roles.js";
import type { PageQuery } from "./credential-store.js";

export const DEFAULT_INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** A longer-lived link is a standing credential; a month is plenty to accept one. */
export const MAX_INVITATION_TTL_SECONDS = 30 * 24 * 3600;

/** 32 random bytes, base64url: the secret of an invitation link, shown once. */
export const generateInvitationToken = (): string => randomBytes(32).toString("base64url");

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
export const isWellFormedToken = (token: string): boolean => TOKEN.test(token);

export const hashInvitationToken = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

export interface InvitationRecord {
  id: string;
  orgId: string;
  email: string;
  role: RoleName;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = `i.id, i.org_id AS "orgId", i.email, i.role, i.invited_by AS "invitedBy",
  i.created_at AS "createdAt", i.expires_at AS "expiresAt", i.accepted_at AS "acceptedAt",
  i.revoked_at AS "revokedAt"`;
const PENDING = "i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()";

/** Invitations in PostgreSQL, found by the SHA-256 of their token. */
export class InvitationStore {
  constructor(private readonly pool: Pool) {}

  async create(invitation: {
    orgId: string;
    email: string;
    role: RoleName;
    invitedBy: string | null;
    tokenHash: Buffer;
    ttlSeconds: number;
  }): Promise<InvitationRecord> {
    const { rows } = await this.pool.query<InvitationRecord>(
      `INSERT INTO invitations AS i (org_id, email, role, invited_by, token_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) RETURNING ${COLUMNS}`,
      [
        invitation.orgId,
        invitation.email,
        invitation.role,
        invitation.invitedBy,
        invitation.tokenHash,
        invitation.ttlSeconds,
      ],
    );
    return rows[0]!;
  }

  /** The org's pending invitations: neither accepted, revoked nor expired. */
  async listPending(orgId: string, page: PageQuery): Promise<{ invitations: InvitationRecord[]; total: number }> {
    const [list, count] = await Promise.all([
      this.pool.query<InvitationRecord>(
        `SELECT ${COLUMNS} FROM invitations i WHERE i.org_id = $1 AND ${PENDING}
         ORDER BY i.created_at, i.id LIMIT $2 OFFSET $3`,
        [orgId, page.limit, page.offset],
      ),
      this.pool.query<{ total: string }>(
        `SELECT count(*) AS total FROM invitations i WHERE i.org_id = $1 AND ${PENDING}`,
        [orgId],
      ),
    ]);
    return { invitations: list.rows, total: Number(count.rows[0]!.total) };
  }

  /** True when a pending invitation of the org was revoked. */
  async revoke(orgId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE invitations i SET revoked_at = now() WHERE i.id = $1 AND i.org_id = $2 AND ${PENDING}`,
      [id, orgId],
    );
    return rowCount === 1;
  }

  /** The pending invitation with this token hash, with its org's name. */
  async findPending(tokenHash: Buffer): Promise<(InvitationRecord & { orgName: string }) | undefined> {
    const { rows } = await this.pool.query<InvitationRecord & { orgName: string }>(
      `SELECT ${COLUMNS}, o.name AS "orgName" FROM invitations i JOIN orgs o ON o.id = i.org_id
       WHERE i.token_hash = $1 AND ${PENDING}`,
      [tokenHash],
    );
    return rows[0];
  }

  /**
   * Marks the invitation accepted and runs `then` in the same transaction. The conditional
   * UPDATE is the single-use guarantee: of two racing accepts, the second waits for the
   * first's row lock, then sees accepted_at set and gets undefined. If `then` throws, the
   * acceptance is rolled back and the token stays usable.
   */
  accept<T>(
    tokenHash: Buffer,
    then: (invitation: InvitationRecord, client: PoolClient) => Promise<T>,
  ): Promise<T | undefined> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<InvitationRecord>(
        `UPDATE invitations i SET accepted_at = now() WHERE i.token_hash = $1 AND ${PENDING} RETURNING ${COLUMNS}`,
        [tokenHash],
      );
      return rows[0] ? then(rows[0], client) : undefined;
    });
  }
}
