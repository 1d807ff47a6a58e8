import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { DEFAULT_URLS, reachable, type InfraUrls } from "./infra-urls.js";
import { ensureDatabase } from "../../scripts/database.mjs";
import { SOURCE_NODE_ARGS } from "../../scripts/processes.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    infra: InfraUrls;
  }
}

/**
 * Provides real PostgreSQL, NATS (JetStream) and Redis to the tests: containers when a
 * Docker engine answers, the local services otherwise. Neither: the run fails (it never
 * skips), naming what is missing.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const containers = await startContainersIfDocker();
  const urls = containers?.urls ?? DEFAULT_URLS;
  const missing: string[] = [];
  for (const [name, u] of Object.entries(urls)) if (!(await reachable(u))) missing.push(`${name} (${u})`);
  if (missing.length > 0) {
    throw new Error(`test infrastructure unreachable: ${missing.join(", ")}; run 'node scripts/infra.mjs' to start it`);
  }
  await ensureDatabase(urls.databaseUrl);
  await ensureJetStream(urls.natsUrl);
  trustSimulatorCa();
  project.provide("infra", urls);
  return async () => {
    await containers?.stop();
  };
}

/**
 * Test workers are forked after this runs and read NODE_EXTRA_CA_CERTS at start, so they
 * (and every process they spawn) trust the provider simulator's CA — in addition to any
 * CA file the user already set, never instead of it.
 */
function trustSimulatorCa(): void {
  const root = path.resolve(import.meta.dirname, "../..");
  const simCa = execFileSync(process.execPath, [...SOURCE_NODE_ARGS, "services/provider-sim/src/ca-cli.ts"], {
    cwd: root,
    encoding: "utf8",
  }).trim();
  const parts = [readFileSync(simCa, "utf8").trim()];
  const userCa = process.env.HERALD_USER_CA_CERTS ?? process.env.NODE_EXTRA_CA_CERTS;
  const bundle = path.join(root, ".herald/test-ca-bundle.pem");
  if (userCa && existsSync(userCa) && path.resolve(userCa) !== bundle) {
    parts.unshift(readFileSync(userCa, "utf8").trim());
    process.env.HERALD_USER_CA_CERTS = userCa;
  }
  mkdirSync(path.dirname(bundle), { recursive: true });
  writeFileSync(bundle, `${parts.join("\n")}\n`);
  process.env.NODE_EXTRA_CA_CERTS = bundle;
}

async function ensureJetStream(url: string): Promise<void> {
  const { connect } = await import("@nats-io/transport-node");
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const nc = await connect({ servers: url });
  try {
    await (await jetstreamManager(nc)).getAccountInfo();
  } catch {
    throw new Error(`NATS at ${url} has no JetStream: restart nats-server with -js`);
  } finally {
    await nc.close();
  }
}

async function startContainersIfDocker(): Promise<{ urls: InfraUrls; stop: () => Promise<void> } | undefined> {
  if (process.env.HERALD_TEST_USE_LOCAL === "1") return undefined;
  if (!existsSync("/var/run/docker.sock") && !process.env.DOCKER_HOST) return undefined;
  const { GenericContainer, Wait } = await import("testcontainers");
  try {
    const [pgC, natsC, redisC] = await Promise.all([
      new GenericContainer("postgres:15-alpine")
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust", POSTGRES_DB: "herald_test" })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
        .start(),
      new GenericContainer("nats:2.10-alpine").withCommand(["-js"]).withExposedPorts(4222).start(),
      new GenericContainer("redis:7-alpine").withExposedPorts(6379).start(),
    ]);
    return {
      urls: {
        databaseUrl: `postgres://postgres@${pgC.getHost()}:${pgC.getMappedPort(5432)}/herald_test`,
        natsUrl: `nats://${natsC.getHost()}:${natsC.getMappedPort(4222)}`,
        redisUrl: `redis://${redisC.getHost()}:${redisC.getMappedPort(6379)}`,
      },
      stop: async () => {
        await Promise.all([pgC.stop(), natsC.stop(), redisC.stop()]);
      },
    };
  } catch {
    // A socket without a working engine (as on these machines): use the local services.
    return undefined;
  }
}
