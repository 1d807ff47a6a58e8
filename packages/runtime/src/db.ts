import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import type { Logger } from "pino";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface DatabaseOptions {
  url: string;
  /** The service's own schema; every connection of the pool works in it. */
  schema: string;
  max?: number;
  /** Where a lost connection is reported. */
  log?: Pick<Logger, "warn">;
}

export function createPool(opts: DatabaseOptions): Pool {
  if (!SCHEMA_NAME.test(opts.schema)) throw new Error(`invalid schema name "${opts.schema}"`);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: `-c search_path=${opts.schema}`,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // A server restart or failover ends every connection: one checked out between two
  // statements reports it as an 'error' event of its client, an idle one also as the pool's.
  // Unhandled, either event would kill the process. The pool discards broken connections;
  // a statement that needed one fails, and its caller retries.
  pool.on("connect", (client) =>
    client.on("error", (err) => opts.log?.warn({ err: err.message }, "PostgreSQL connection lost")),
  );
  pool.on("error", () => undefined);
  return pool;
}

/** Runs fn in a transaction; rolls back on any error. */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Applies the `NNN_name.sql` files of dir that the schema has not seen yet, in order,
 * each in its own transaction, under an advisory lock so that replicas starting
 * together migrate once.
 */
export async function migrate(pool: Pool, schema: string, dir: string, log?: Logger): Promise<string[]> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  const files = (await readdir(dir)).filter((f) => /^\d+_[\w-]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [`herald.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         name text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ name: string }>(`SELECT name FROM ${schema}.schema_migrations`)).rows.map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(path.join(dir, file), "utf8");
      await client.query("BEGIN");
      try {
        await client.query(`SET LOCAL search_path TO ${schema}`);
        await client.query(sql);
        await client.query(`INSERT INTO ${schema}.schema_migrations (name) VALUES ($1)`, [file]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${schema}/${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(file);
      log?.info({ schema, migration: file }, "migration applied");
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [`herald.migrate.${schema}`]).catch(() => undefined);
    client.release();
  }
  return applied;
}

/** True when the error is Postgres' unique_violation (23505). */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === "23505";
}
