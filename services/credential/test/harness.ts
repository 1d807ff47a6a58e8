import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { CredentialService } from "@herald/proto/credential";
import { createLogger, createPool, createRpcClient, type Pool } from "@herald/runtime";
import { deleteNamespaceStreams } from "../../../test/support/nats-streams.js";
import { uniqueName } from "../../../test/support/unique.js";
import type { Config } from "../src/config.js";
import { start, type CredentialApp } from "../src/server.js";
import { LogCapture } from "../../../test/support/log-capture.js";

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
