import { inTransaction, isUniqueViolation, type Pool, type PoolClient } from "@herald/runtime";
import type { RoleName } from "./member-roles.js";
import type { PageQuery } from "./credential-store.js";

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
}

export interface UserWithHash extends UserRecord {
  passwordHash: string;
}

export interface OrgRecord {
  id: string;
  name: string;
  createdAt: Date;
}

export interface MembershipRecord {
  orgId: string;
  orgName: string;
  userId: string;
  role: RoleName;
  createdAt: Date;
}

export interface MemberRecord {
  user: UserRecord;
  role: RoleName;
  joinedAt: Date;
}

export type MemberChange = { ok: true; member: MemberRecord } | { ok: false; reason: "not_found" | "last_owner" };
export type MemberRemoval = { ok: true } | { ok: false; reason: "not_found" | "last_owner" };
export type OrgUpdate = { ok: true; org: OrgRecord } | { ok: false; reason: "not_found" | "name_taken" };

const USER_COLUMNS = `u.id, u.email, u.name, u.created_at AS "createdAt"`;
const ORG_COLUMNS = `id, name, created_at AS "createdAt"`;
const MEMBERSHIP_COLUMNS = `m.org_id AS "orgId", o.name AS "orgName", m.user_id AS "userId", m.role,
  m.created_at AS "createdAt"`;
const MEMBER_COLUMNS = `json_build_object('id', u.id, 'email', u.email, 'name', u.name,
  'createdAt', u.created_at) AS "user", m.role, m.created_at AS "joinedAt"`;

interface MemberRow {
  user: Omit<UserRecord, "createdAt"> & { createdAt: string };
  role: RoleName;
  joinedAt: Date;
}
const toMember = (row: MemberRow): MemberRecord => ({
  ...row,
  user: { ...row.user, createdAt: new Date(row.user.createdAt) },
});

/** Users, organizations and memberships in PostgreSQL. Emails arrive normalised. */
export class IdentityStore {
  constructor(private readonly pool: Pool) {}

  /** The id of the bootstrap org, created with this name if there is none (safe under concurrency). */
  async ensureBootstrapOrg(name: string): Promise<string> {
    try {
      // The no-op update makes RETURNING yield the row when it already exists.
      const { rows } = await this.pool.query<{ id: string }>(
        `INSERT INTO orgs (name, bootstrap) VALUES ($1, true)
         ON CONFLICT (bootstrap) WHERE bootstrap DO UPDATE SET bootstrap = true
         RETURNING id`,
        [name],
      );
      return rows[0]!.id;
    } catch (err) {
      // Replicas starting together on an empty database: ON CONFLICT covers only the
      // bootstrap flag's index, so the insert that loses the race fails on the org name's
      // unique index instead, once the winner has committed. The winner's org is the one.
      if (!isUniqueViolation(err)) throw err;
      const { rows } = await this.pool.query<{ id: string }>("SELECT id FROM orgs WHERE bootstrap");
      if (rows[0]) return rows[0].id;
      throw new Error(`cannot create the bootstrap org: an org named "${name}" exists and is not the bootstrap org`);
    }
  }

  async findUserByEmail(email: string): Promise<UserWithHash | undefined> {
    const { rows } = await this.pool.query<UserWithHash>(
      `SELECT ${USER_COLUMNS}, u.password_hash AS "passwordHash" FROM users u WHERE lower(u.email) = $1`,
      [email],
    );
    return rows[0];
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const { rows } = await this.pool.query<UserRecord>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [id]);
    return rows[0];
  }

  /** undefined when a user with that email exists. */
  async createUser(
    user: { email: string; name: string; passwordHash: string },
    client: Pool | PoolClient = this.pool,
  ): Promise<UserRecord | undefined> {
    const { rows } = await client.query<UserRecord>(
      `INSERT INTO users AS u (email, name, password_hash) VALUES ($1, $2, $3)
       ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${USER_COLUMNS}`,
      [user.email, user.name, user.passwordHash],
    );
    return rows[0];
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    await this.pool.query("UPDATE users SET password_hash = $2, updated_at = clock_timestamp() WHERE id = $1", [
      userId,
      passwordHash,
    ]);
  }

  async listMemberships(userId: string): Promise<MembershipRecord[]> {
    const { rows } = await this.pool.query<MembershipRecord>(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM memberships m JOIN orgs o ON o.id = m.org_id
       WHERE m.user_id = $1 ORDER BY m.created_at, m.org_id`,
      [userId],
    );
    return rows;
  }

  async getMembership(
    orgId: string,
    userId: string,
    client: Pool | PoolClient = this.pool,
  ): Promise<MembershipRecord | undefined> {
    const { rows } = await client.query<MembershipRecord>(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM memberships m JOIN orgs o ON o.id = m.org_id
       WHERE m.org_id = $1 AND m.user_id = $2`,
      [orgId, userId],
    );
    return rows[0];
  }

  /** Adds the membership, or leaves an existing one as it is. */
  async addMembership(orgId: string, userId: string, role: RoleName, client: Pool | PoolClient = this.pool) {
    await client.query(
      "INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (org_id, user_id) DO NOTHING",
      [orgId, userId, role],
    );
  }

  /** Makes the user an owner of the org, whatever their role was (the bootstrap admin). */
  async ensureOwner(orgId: string, userId: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')
       ON CONFLICT (org_id, user_id) DO UPDATE SET role = 'owner' WHERE memberships.role <> 'owner'`,
      [orgId, userId],
    );
  }

  async isMemberByEmail(orgId: string, email: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND lower(u.email) = $2",
      [orgId, email],
    );
    return (rowCount ?? 0) > 0;
  }

  async getOrg(id: string): Promise<OrgRecord | undefined> {
    const { rows } = await this.pool.query<OrgRecord>(`SELECT ${ORG_COLUMNS} FROM orgs WHERE id = $1`, [id]);
    return rows[0];
  }

  async updateOrg(id: string, name: string | undefined): Promise<OrgUpdate> {
    try {
      const { rows } = await this.pool.query<OrgRecord>(
        `UPDATE orgs SET name = COALESCE($2, name) WHERE id = $1 RETURNING ${ORG_COLUMNS}`,
        [id, name ?? null],
      );
      return rows[0] ? { ok: true, org: rows[0] } : { ok: false, reason: "not_found" };
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, reason: "name_taken" };
      throw err;
    }
  }

  async listMembers(orgId: string, page: PageQuery): Promise<{ members: MemberRecord[]; total: number }> {
    const [list, count] = await Promise.all([
      this.pool.query<MemberRow>(
        `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.org_id = $1 ORDER BY m.created_at, m.user_id LIMIT $2 OFFSET $3`,
        [orgId, page.limit, page.offset],
      ),
      this.pool.query<{ total: string }>("SELECT count(*) AS total FROM memberships WHERE org_id = $1", [orgId]),
    ]);
    return { members: list.rows.map(toMember), total: Number(count.rows[0]!.total) };
  }

  updateMemberRole(orgId: string, userId: string, role: RoleName): Promise<MemberChange> {
    return this.changeMember(orgId, userId, role !== "owner", async (client) => {
      const { rows } = await client.query<MemberRow>(
        `UPDATE memberships m SET role = $3 FROM users u
         WHERE m.org_id = $1 AND m.user_id = $2 AND u.id = m.user_id RETURNING ${MEMBER_COLUMNS}`,
        [orgId, userId, role],
      );
      return { ok: true, member: toMember(rows[0]!) };
    });
  }

  removeMember(orgId: string, userId: string): Promise<MemberRemoval> {
    return this.changeMember(orgId, userId, true, async (client) => {
      await client.query("DELETE FROM memberships WHERE org_id = $1 AND user_id = $2", [orgId, userId]);
      return { ok: true };
    });
  }

  /**
   * Runs a change of one membership with the org's row locked, so that two owners
   * demoting or removing each other at once cannot leave the org without an owner.
   */
  private changeMember<T>(
    orgId: string,
    userId: string,
    dropsOwner: boolean,
    change: (client: PoolClient) => Promise<T>,
  ): Promise<T | { ok: false; reason: "not_found" | "last_owner" }> {
    return inTransaction(this.pool, async (client) => {
      await client.query("SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE", [orgId]);
      const current = await this.getMembership(orgId, userId, client);
      if (!current) return { ok: false, reason: "not_found" };
      if (dropsOwner && current.role === "owner") {
        const { rows } = await client.query<{ n: string }>(
          "SELECT count(*) AS n FROM memberships WHERE org_id = $1 AND role = 'owner'",
          [orgId],
        );
        if (Number(rows[0]!.n) <= 1) return { ok: false, reason: "last_owner" };
      }
      return change(client);
    });
  }
}
