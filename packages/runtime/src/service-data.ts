import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { type AdminServer, startAdminServer } from "./admin-server.js";
import { Closers } from "./closers.js";
import { createPool, migrate, type Pool } from "./db.js";
import { connectNats, type NatsConnection } from "./nats.js";
import { allReady, natsReady, postgresReady } from "./readiness.js";
import { type StreamNames, streamNames } from "./streams.js";

/**
 * The start-up of a service: `start` adds a closer for each resource it opens (Closers:
 * last-added first). If it throws, what it had opened is closed and the error rethrown;
 * otherwise its answer gets close(), which closes everything.
 */
export async function startWithClosers<T extends object>(
  log: Logger,
  start: (closers: Closers) => Promise<T>,
): Promise<T & { close(): Promise<void> }> {
  const closers = new Closers();
  try {
    return { ...(await start(closers)), close: () => closers.close() };
  } catch (err) {
    await closers
      .close()
      .catch((closeErr: unknown) => log.error({ err: closeErr }, "cleanup after failed start-up failed"));
    throw err;
  }
}

/** Where a service keeps its data: its PostgreSQL schema and its NATS namespace and replication (commonEnv). */
export interface ServiceDataConfig extends NatsStreamsConfig {
  databaseUrl: string;
  schema: string;
  natsUrl: string;
}

/** The common variables that name and replicate the streams (commonEnv). */
export interface NatsStreamsConfig {
  natsNamespace: string;
  /** NATS_STREAM_REPLICAS; 1 when absent (a config built by hand, e.g. in a test). */
  natsStreamReplicas?: number;
  natsPlacementTags?: string[];
}

/** The streams' names and replication of a service's configuration. */
export function configuredStreams(config: NatsStreamsConfig): StreamNames {
  return streamNames(config.natsNamespace, {
    replicas: config.natsStreamReplicas ?? 1,
    placementTags: config.natsPlacementTags ?? [],
  });
}

export interface ServiceData {
  pool: Pool;
  nc: NatsConnection;
  names: StreamNames;
}

/**
 * What a service that keeps data opens first: its NATS connection (named `name`), then a
 * pool on its schema, migrated with the package's migrations; both closed by `closers`.
 * The migration comes last, so that what a service writes at start-up (the credential
 * service's bootstrap rows) follows it at once: replicas starting together take their
 * turns at the migration lock and arrive one after the other.
 */
export async function openServiceData(
  config: ServiceDataConfig,
  opts: { name: string; migrations: string; log: Logger },
  closers: Closers,
): Promise<ServiceData> {
  const { log } = opts;
  const nc = await connectNats(config.natsUrl, opts.name, log);
  closers.add(() => nc.drain());
  const pool = createPool({ url: config.databaseUrl, schema: config.schema, log });
  closers.add(() => pool.end());
  await migrate(pool, config.schema, opts.migrations, log);
  return { pool, nc, names: configuredStreams(config) };
}

/** The admin server of a service that keeps data: ready while PostgreSQL and NATS answer. */
export async function startDataAdmin(
  port: number,
  registry: Registry,
  { pool, nc }: Pick<ServiceData, "pool" | "nc">,
  closers: Closers,
): Promise<AdminServer> {
  const admin = await startAdminServer({ port, registry, ready: allReady(postgresReady(pool), natsReady(nc)) });
  closers.add(() => admin.close());
  return admin;
}
