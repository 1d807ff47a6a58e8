import path from "node:path";
import {
  createMetricsRegistry,
  type Logger,
  openServiceData,
  packageDir,
  type Resolver,
  sealedBoxOf,
  publishWebhookEvent,
  startDataAdmin,
  startRpcServer,
  startWithClosers,
} from "@herald/runtime";
import { WebhookService } from "@herald/proto/webhook";
import type { Config } from "./config.js";
import { startWebhooksAppDeletedConsumer } from "./app-deleted-consumer.js";
import { DeliveryLoop } from "./delivery-loop.js";
import { startEventConsumer } from "./event-consumer.js";
import { HttpSender } from "./http-sender.js";
import { createWebhookMetrics } from "./metrics.js";
import { WebhookServiceImpl } from "./webhook-service.js";
import { PgWebhookStore } from "./webhook-store.js";

const MIGRATIONS = path.join(packageDir("@herald/webhooks"), "migrations");

export interface WebhooksApp {
  port: number;
  adminPort: number;
  close(): Promise<void>;
}

/** Wires the endpoints API and the dispatcher; the same start() runs in production, dev mode and tests. */
export async function start(
  config: Config,
  deps: { log: Logger /** Tests: a resolver instead of DNS, for URL checks and connections. */; resolve?: Resolver },
): Promise<WebhooksApp> {
  const { log } = deps;
  return startWithClosers(log, async (closers) => {
    const box = sealedBoxOf(config);
    const data = await openServiceData(config, { name: "webhooks", migrations: MIGRATIONS, log }, closers);
    const { pool, nc, names } = data;
    const store = new PgWebhookStore(pool);
    const registry = createMetricsRegistry("webhooks");
    const metrics = createWebhookMetrics(registry, { backlog: () => store.backlog(), due: () => store.due() });

    const sender = new HttpSender({
      allowPrivate: config.allowPrivate,
      timeoutMs: config.timeoutMs,
      resolve: deps.resolve,
    });
    closers.add(() => sender.close());
    const loop = new DeliveryLoop({
      store,
      sender,
      box,
      metrics,
      log,
      concurrency: config.concurrency,
      pollMs: config.pollMs,
      timeoutMs: config.timeoutMs,
      retryScheduleMs: config.retryScheduleMs,
      disableAfterMs: config.disableAfterMs,
    });
    closers.add(() => loop.stop());
    const consumer = await startEventConsumer({ nc, names, store, metrics, log, onRecorded: () => loop.poke() });
    closers.add(() => consumer.stop());
    const appDeleted = await startWebhooksAppDeletedConsumer({ nc, names, store, log });
    closers.add(() => appDeleted.stop());

    const service = new WebhookServiceImpl({
      store,
      box,
      allowPrivate: config.allowPrivate,
      resolve: deps.resolve,
      publish: async (event) => void (await publishWebhookEvent(nc, names, event)),
    });
    const rpc = await startRpcServer({
      routes: (router) => router.service(WebhookService, service),
      port: config.port,
      log,
    });
    closers.add(() => rpc.close());
    const admin = await startDataAdmin(config.adminPort, registry, data, closers);
    return { port: rpc.port, adminPort: admin.port };
  });
}
