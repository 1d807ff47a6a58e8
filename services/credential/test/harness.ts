import { randomBytes } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { inject } from "vitest";
import { CredentialService } from "@herald/proto/credential";
import { createLogger, createPool, createRpcClient, type Pool } from "@herald/runtime";
import { deleteNamespaceStreams } from "../../../test/support/nats-streams.js";
import { uniqueName } from "../../../test/support/unique.js";
import type { Config } from "../src/config.js";
import { start, type CredentialApp } from "../src/server.js";
import { LogCapture } from "../../../test/support/log-capture.js";
import { suiteFixture } from "../../../test/support/suite-fixture.js";

/** A config of its own for one test file: fresh schema, NATS namespace and master key. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  const infra = inject("infra");
  return {
    logLevel: "debug",
    databaseUrl: infra.databaseUrl,
    natsUrl: infra.natsUrl,
    natsNamespace: uniqueName("credns"),
    port: 0,
    adminPort: 0,
    schema: uniqueName("cred"),
    masterKey: randomBytes(32),
    bootstrapApiKey: undefined,
    defaultRateLimit: 1000,
    ...overrides,
  };
}

export interface Running {
  app: CredentialApp;
  client: ReturnType<typeof createRpcClient<typeof CredentialService>>["client"];
  logs: LogCapture;
  close(): Promise<void>;
}

/** Starts the service the way main.ts does, with a debug logger writing into memory. */
export async function startService(config: Config, logs = new LogCapture()): Promise<Running> {
  const app = await start(config, { log: createLogger("credential", "debug", logs) });
  const rpc = createRpcClient(CredentialService, `http://127.0.0.1:${app.port}`);
  return {
    app,
    client: rpc.client,
    logs,
    close: async () => {
      rpc.close();
      await app.close();
    },
  };
}

/**
 * A service on `config` that a test file starts (`start`, then `ready` to learn what its tests
 * need of it) before its tests; after them (or when the start failed) it is stopped and its
 * schema dropped, then `afterStop` may look at what it left.
 */
export function serviceFixture<S extends { close(): Promise<void> }, T extends S>(
  config: Config,
  start: () => Promise<S>,
  ready: (started: S) => Promise<T>,
  afterStop: (stopped: T) => void = () => {},
): T {
  return suiteFixture(
    async () => {
      let started: S | undefined;
      try {
        started = await start();
        return await ready(started);
      } catch (err) {
        await started?.close();
        await cleanUp(config);
        throw err;
      }
    },
    async (svc) => {
      await svc.close();
      await cleanUp(config);
      afterStop(svc);
    },
  );
}

/**
 * The service of a test file (serviceFixture) on `config`, which names a bootstrap API key;
 * `orgId` is that key's org.
 */
export function useService(config: Config): Running & { orgId: string } {
  return serviceFixture(
    config,
    () => startService(config),
    async (svc) => {
      const { principal } = await svc.client.verifyApiKey({ secret: config.bootstrapApiKey! });
      return { ...svc, orgId: principal!.orgId };
    },
  );
}

/** The ConnectError a call failed with; fails the test if it succeeded. */
export const failure = (p: Promise<unknown>): Promise<ConnectError> =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => ConnectError.from(e),
  );

/** Stores an APNs, an FCM and a VAPID config for the app, each from the given material. */
export async function putEveryPlatformConfig(
  client: Running["client"],
  appId: string,
  material: {
    apns: { p8: string; keyId: string; teamId: string };
    account: { json: string };
    vapid: { publicKey: string; privateKey: string };
  },
): Promise<void> {
  const { apns, account, vapid } = material;
  await client.putPlatformConfig({
    appId,
    credentials: { case: "apns", value: { p8Key: apns.p8, keyId: apns.keyId, teamId: apns.teamId } },
  });
  await client.putPlatformConfig({ appId, credentials: { case: "fcm", value: { serviceAccountJson: account.json } } });
  await client.putPlatformConfig({
    appId,
    credentials: { case: "vapid", value: { ...vapid, subject: "mailto:ops@example.com" } },
  });
}

/** A pool on the test's schema, to look at rows the way an attacker with the database would. */
export const rawPool = (config: Config): Pool => createPool({ url: config.databaseUrl, schema: config.schema, max: 2 });

/** Drops the test's schema and streams. */
export async function cleanUp(config: Config): Promise<void> {
  const pool = createPool({ url: config.databaseUrl, schema: "public", max: 1 });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${config.schema} CASCADE`);
  } finally {
    await pool.end();
  }
  await deleteNamespaceStreams(config.natsUrl, config.natsNamespace);
}

/** The line of a PEM block after its header: what a leaked key would show. */
export const pemBody = (pem: string): string => pem.split("\n")[1] ?? pem;
