import { randomBytes } from "node:crypto";
import type { Pool } from "@herald/runtime";
import type { PageQuery } from "./credential-store.js";

export interface OAuthClientRecord {
  clientId: string;
  orgId: string;
  name: string;
  redirectUris: string[];
  createdAt: Date;
}

/** Random and unguessable, though a public client's id is no secret. */
export const generateClientId = (): string => `hc_${randomBytes(18).toString("base64url")}`;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);
export const MAX_REDIRECT_URIS = 10;

/**
 * Why a redirect URI is unacceptable, or undefined. Absolute http(s) URLs without a
 * fragment (RFC 6749 §3.1.2); plain http only for loopback redirects (RFC 8252 §7.3),
 * since anything else would carry authorization codes in the clear.
 */
export function redirectUriProblem(value: string): string | undefined {
  let uri: URL;
  try {
    uri = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (value.includes("#")) return "must not have a fragment";
  if (uri.username || uri.password) return "must not carry credentials";
  if (uri.protocol === "https:") return undefined;
  if (uri.protocol === "http:")
    return LOOPBACK_HOSTS.has(uri.hostname) ? undefined : "must use https unless it is a loopback address";
  return "must be an http or https URL";
}

const COLUMNS = `client_id AS "clientId", org_id AS "orgId", name, redirect_uris AS "redirectUris",
  created_at AS "createdAt"`;

/** OAuth clients registered by organizations, in PostgreSQL. */
export class OAuthClientStore {
  constructor(private readonly pool: Pool) {}

  async create(client: Omit<OAuthClientRecord, "createdAt">): Promise<OAuthClientRecord> {
    const { rows } = await this.pool.query<OAuthClientRecord>(
      `INSERT INTO oauth_clients (client_id, org_id, name, redirect_uris) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
      [client.clientId, client.orgId, client.name, client.redirectUris],
    );
    return rows[0]!;
  }

  async get(clientId: string): Promise<OAuthClientRecord | undefined> {
    const { rows } = await this.pool.query<OAuthClientRecord>(
      `SELECT ${COLUMNS} FROM oauth_clients WHERE client_id = $1`,
      [clientId],
    );
    return rows[0];
  }

  async list(orgId: string, page: PageQuery): Promise<{ clients: OAuthClientRecord[]; total: number }> {
    const [list, count] = await Promise.all([
      this.pool.query<OAuthClientRecord>(
        `SELECT ${COLUMNS} FROM oauth_clients WHERE org_id = $1 ORDER BY created_at, client_id LIMIT $2 OFFSET $3`,
        [orgId, page.limit, page.offset],
      ),
      this.pool.query<{ total: string }>("SELECT count(*) AS total FROM oauth_clients WHERE org_id = $1", [orgId]),
    ]);
    return { clients: list.rows, total: Number(count.rows[0]!.total) };
  }

  async delete(orgId: string, clientId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM oauth_clients WHERE client_id = $1 AND org_id = $2", [
      clientId,
      orgId,
    ]);
    return rowCount === 1;
  }
}
