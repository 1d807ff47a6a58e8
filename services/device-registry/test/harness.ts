import { ConnectError } from "@connectrpc/connect";
import { inject } from "vitest";
import { createLogger, createPool, createRpcClient, readEnv, streamNames, type Pool } from "@herald/runtime";
import { Platform } from "@herald/proto/common";
import { DeviceRegistryService } from "@herald/proto/device";
import { InAppMessageService } from "@herald/proto/in_app_message";
import { connect as connectNats } from "@nats-io/transport-node";
import { apnsToken, fcmToken } from "../../../test/support/device-tokens.js";
import { LogCapture } from "../../../test/support/log-capture.js";
import { dropServiceData, serviceTestEnv } from "../../../test/support/service-env.js";
import { suiteFixture } from "../../../test/support/suite-fixture.js";
import { uniqueName } from "../../../test/support/unique.js";
import { waitUntil } from "../../../test/support/wait.js";
import { configSpec, type Config } from "../src/config.js";
import { start } from "../src/server.js";

/**
 * One device-registry as production runs it (start(), real Postgres and NATS), on its
 * own schema and NATS namespace, plus its RPC clients (devices and segments, in-app
 * messages), a pool for direct inspection and a NATS connection to publish and read events.
 */
export async function startRegistry(env: Record<string, string> = {}) {
  const infra = inject("infra");
  const schema = uniqueName("dev");
  const namespace = uniqueName("dev");
  const config: Config = readEnv(configSpec, serviceTestEnv(infra, { schema, namespace }, env));
  // Errors at least are kept (a test waits for a failure to be logged); TEST_LOG_LEVEL shows them too.
  const logs = new LogCapture(process.env.TEST_LOG_LEVEL !== undefined);
  const log = createLogger("device-registry", process.env.TEST_LOG_LEVEL ?? "error", logs);
  const connect = (port: number) => ({
    registry: createRpcClient(DeviceRegistryService, `http://127.0.0.1:${port}`, { timeoutMs: 30_000 }),
    inApp: createRpcClient(InAppMessageService, `http://127.0.0.1:${port}`, { timeoutMs: 30_000 }),
    close() {
      this.registry.close();
      this.inApp.close();
    },
  });
  const app = await start(config, { log });
  let rpc = connect(app.port);
  const pool: Pool = createPool({ url: infra.databaseUrl, schema });
  const nc = await connectNats({ servers: infra.natsUrl });
  const names = streamNames(namespace);
  const registry = {
    app,
    client: rpc.registry.client,
    inApp: rpc.inApp.client,
    pool,
    nc,
    schema,
    names,
    logs,
    natsUrl: infra.natsUrl,
    /**
     * Closes the service (if a test has not already) and starts a new one on the same
     * schema and namespace: what a restarted process finds. `app` and the clients are the new one's.
     */
    async restart() {
      rpc.close();
      await registry.app.close();
      registry.app = await start(config, { log });
      rpc = connect(registry.app.port);
      registry.client = rpc.registry.client;
      registry.inApp = rpc.inApp.client;
    },
    async stop() {
      rpc.close();
      await nc.close();
      await registry.app.close();
      await pool.end();
      await dropServiceData(infra, [schema], namespace);
    },
  };
  return registry;
}

export type Registry = Awaited<ReturnType<typeof startRegistry>>;

/** The registry of a test file or describe block: started before its tests, stopped after (suiteFixture). */
export function useRegistry(env: Record<string, string> = {}): Registry {
  return suiteFixture(
    () => startRegistry(env),
    (r) => r.stop(),
  );
}

/** Registers a new device of the app (an iOS one unless told) and answers it. */
export async function registerDevice(
  r: Registry,
  appId: string,
  fields: { externalId?: string; platform?: Platform } = {},
) {
  const platform = fields.platform ?? Platform.IOS;
  const pushToken = platform === Platform.ANDROID ? fcmToken() : apnsToken();
  const { device } = await r.client.registerDevice({ appId, pushToken, platform, externalId: fields.externalId });
  return device!;
}

/** The error a call that must fail fails with. */
export async function rpcError(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

/** Polls until the check holds: consumers work asynchronously. */
export const waitFor = (check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> =>
  waitUntil("a device-registry condition", check, timeoutMs);
