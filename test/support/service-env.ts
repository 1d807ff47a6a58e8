import { createPool } from "@herald/runtime";
import type { InfraUrls } from "./infra-urls.js";
import { deleteNamespaceStreams } from "./nats-streams.js";

/** Where a service under test keeps its data: a PostgreSQL schema and a NATS namespace of its own. */
export interface ServicePlace {
  schema: string;
  namespace: string;
}

/**
 * The environment a service's readEnv gets in a test: the test infrastructure's PostgreSQL
 * and NATS, its schema and namespace, ports the system picks; `env` adds or overrides.
 */
export function serviceTestEnv(infra: InfraUrls, place: ServicePlace, env: Record<string, string> = {}) {
  return {
    DATABASE_URL: infra.databaseUrl,
    NATS_URL: infra.natsUrl,
    NATS_NAMESPACE: place.namespace,
    DB_SCHEMA: place.schema,
    PORT: "0",
    ADMIN_PORT: "0",
    ...env,
  };
}

/** Drops what services under test kept: their schemas, then the namespace's streams. */
export async function dropServiceData(infra: InfraUrls, schemas: string[], namespace: string): Promise<void> {
  const admin = createPool({ url: infra.databaseUrl, schema: "public", max: 1 });
  try {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.end();
  }
  await deleteNamespaceStreams(infra.natsUrl, namespace);
}
