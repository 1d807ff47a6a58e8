import { inject } from "vitest";
import { createLogger, createPool, createRpcClient, readEnv, streamNames, type Pool } from "@herald/runtime";
import { DeviceRegistryService } from "@herald/proto/device";
import { LogCapture } from "../../../test/support/log-capture.js";
import { deleteNamespaceStreams } from "../../../test/support/nats-streams.js";
import { uniqueName } from "../../../test/support/unique.js";
import { waitUntil } from "../../../test/support/wait.js";
import { configSpec, type Config } from "../src/config.js";
import { start } from "../src/server.js";

/**
 * One device-registry as production runs it (start(), real Postgres and NATS), on its
 * own schema and NATS namespace, plus a gRPC client and a pool for direct inspection.
 */
export async function startRegistry(env: Record<string, string> = {}) {
  const infra = inject("infra");
  const schema = uniqueName("dev");
  const namespace = uniqueName("dev");
  const config: Config = readEnv(configSpec, {
    DATABASE_URL: infra.databaseUrl,
    NATS_URL: infra.natsUrl,
    NATS_NAMESPACE: namespace,
    DB_SCHEMA: schema,
    PORT: "0",
    ADMIN_PORT: "0",
    ...env,
  });
  // Errors at least are kept (a test waits for a failure to be logged); TEST_LOG_LEVEL shows them too.
  const logs = new LogCapture(process.env.TEST_LOG_LEVEL !== undefined);
  const log = createLogger("device-registry", process.env.TEST_LOG_LEVEL ?? "error", logs);
  const connect = (port: number) =>
    createRpcClient(DeviceRegistryService, `http://127.0.0.1:${port}`, { timeoutMs: 30_000 });
  const app = await start(config, { log });
  let rpc = connect(app.port);
  const pool: Pool = createPool({ url: infra.databaseUrl, schema });
  const names = streamNames(namespace);
  const registry = {
    app,
    client: rpc.client,
    pool,
    schema,
    names,
    logs,
    natsUrl: infra.natsUrl,
    /**
     * Closes the service (if a test has not already) and starts a new one on the same
     * schema and namespace: what a restarted process finds. `app` and `client` are the new one's.
     */
    async restart() {
      rpc.close();
      await registry.app.close();
      registry.app = await start(config, { log });
      rpc = connect(registry.app.port);
      registry.client = rpc.client;
    },
    async stop() {
      rpc.close();
      await registry.app.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
      await deleteNamespaceStreams(infra.natsUrl, namespace);
    },
  };
  return registry;
}

export type Registry = Awaited<ReturnType<typeof startRegistry>>;

/** Polls until the check holds: consumers work asynchronously. */
export const waitFor = (check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> =>
  waitUntil("a device-registry condition", check, timeoutMs);
