import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { connect as connectNats } from "@nats-io/transport-node";
import { inject } from "vitest";
import { WebhookService } from "@herald/proto/webhook";
import {
  createLogger,
  createPool,
  createRpcClient,
  type Pool,
  type Resolver,
  readEnv,
  streamNames,
} from "@herald/runtime";
import { dropServiceData, serviceTestEnv } from "../../../test/support/service-env.js";
import { suiteFixture } from "../../../test/support/suite-fixture.js";
import { uniqueName } from "../../../test/support/unique.js";
import { waitUntil } from "../../../test/support/wait.js";
import { type Config, configSpec } from "../src/config.js";
import { start } from "../src/server.js";

/**
 * One webhooks service as production runs it (start(), real Postgres and NATS), on its
 * own schema and NATS namespace, with a gRPC client, a pool for inspection and a NATS
 * connection to publish events and read the streams.
 */
export async function startWebhooks(env: Record<string, string> = {}, opts: { resolve?: Resolver } = {}) {
  const infra = inject("infra");
  const schema = uniqueName("whk");
  const namespace = uniqueName("whk");
  const config: Config = readEnv(
    configSpec,
    serviceTestEnv(
      infra,
      { schema, namespace },
      {
        HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
        HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
        HERALD_WEBHOOK_RETRY_SCHEDULE_MS: "100,200,300",
        HERALD_WEBHOOK_POLL_MS: "50",
        ...env,
      },
    ),
  );
  const log = createLogger("webhooks", process.env.TEST_LOG_LEVEL ?? "silent");
  const app = await start(config, { log, resolve: opts.resolve });
  const rpc = createRpcClient(WebhookService, `http://127.0.0.1:${app.port}`, { timeoutMs: 30_000 });
  const pool: Pool = createPool({ url: infra.databaseUrl, schema });
  const nc = await connectNats({ servers: infra.natsUrl });
  return {
    app,
    client: rpc.client,
    pool,
    nc,
    names: streamNames(namespace),
    async stop() {
      rpc.close();
      await nc.close();
      await app.close();
      await pool.end();
      await dropServiceData(infra, [schema], namespace);
    },
  };
}

export type Webhooks = Awaited<ReturnType<typeof startWebhooks>>;

/** The service of a test file or describe block: started before its tests, stopped after (suiteFixture). */
export function useWebhooks(env: Record<string, string> = {}): Webhooks {
  return suiteFixture(
    () => startWebhooks(env),
    (svc) => svc.stop(),
  );
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local HTTP receiver; `respond` decides each answer (status, or "hang" to never answer). */
export async function startReceiver(respond: (n: number, r: Received) => number | "hang" = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(r);
      const answer = respond(received.length, r);
      if (answer === "hang") return;
      res.writeHead(answer, { "content-type": "text/plain" }).end(`answer ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const waitFor = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> =>
  waitUntil(what, async () => await check(), timeoutMs);
