import path from "node:path";
import { jetstream } from "@nats-io/jetstream";
import {
  createMetricsRegistry,
  registerConsumerBacklog,
  ensureStream,
  openServiceData,
  OutboxRelay,
  registerOutboxMetrics,
  startDataAdmin,
  startRpcServer,
  startWithClosers,
  type Logger,
  packageDir,
  WEBHOOK_OUTBOX_KIND,
  webhookOutboxKind,
  webhooksStreamConfig,
} from "@herald/runtime";
import { AndroidChannelService } from "@herald/proto/android_channel";
import { DeviceRegistryService } from "@herald/proto/device";
import { InAppMessageService } from "@herald/proto/in_app_message";
import { AndroidChannelServiceImpl } from "./android-channel-service.js";
import { PgAndroidChannelStore } from "./android-channel-store.js";
import { APP_DELETED_DURABLE, startRegistryAppDeletedConsumer } from "./app-deleted-consumer.js";
import type { Config } from "./config.js";
import { startDeviceInvalidatedConsumer } from "./device-invalidated-consumer.js";
import { DeviceRegistryServiceImpl } from "./device-registry-service.js";
import { InAppMessageServiceImpl } from "./in-app-message-service.js";
import { PgInAppMessageStore } from "./in-app-message-store.js";
import { createDeviceRegistryMetrics } from "./metrics.js";
import { PgSegmentStore } from "./segment-store.js";
import { PgDeviceStore } from "./device-store.js";

const MIGRATIONS = path.join(packageDir("@herald/device-registry"), "migrations");

export interface DeviceRegistryApp {
  port: number;
  adminPort: number;
  close(): Promise<void>;
}

/** Wires the service; the same start() runs in production, dev mode and tests. */
export async function start(config: Config, deps: { log: Logger }): Promise<DeviceRegistryApp> {
  const { log } = deps;
  return startWithClosers(log, async (closers) => {
    const data = await openServiceData(config, { name: "device-registry", migrations: MIGRATIONS, log }, closers);
    const { pool, nc, names } = data;
    // Webhook events (device-events.ts) leave through the outbox; stopped before NATS
    // drains and the pool ends (closers run last-added first).
    await ensureStream(nc, webhooksStreamConfig(names), log);
    const outbox = new OutboxRelay({
      pool,
      js: jetstream(nc),
      kinds: { [WEBHOOK_OUTBOX_KIND]: webhookOutboxKind(names) },
      log,
    });
    outbox.start();
    closers.add(() => outbox.stop());
    const store = new PgDeviceStore(pool, () => void outbox.flush());
    const segments = new PgSegmentStore(pool);
    const channels = new PgAndroidChannelStore(pool);
    const inAppMessages = new PgInAppMessageStore(pool);
    const registry = createMetricsRegistry("device-registry");
    const metrics = createDeviceRegistryMetrics(registry);
    registerOutboxMetrics(registry, pool);
    registerConsumerBacklog(registry, nc, {
      name: "herald_events_backlog_messages",
      help: "Domain events (app.deleted, device.invalidated) not yet applied to the registry (pending + ack pending)",
      labelNames: ["event"],
      consumers: [
        {
          labels: { event: "app.deleted" },
          stream: names.eventsStream,
          durable: names.consumer(APP_DELETED_DURABLE),
        },
        {
          labels: { event: "device.invalidated" },
          stream: names.eventsStream,
          durable: names.consumer("device-registry-invalidated"),
        },
      ],
    });
    const appDeleted = await startRegistryAppDeletedConsumer({
      nc,
      names,
      store,
      segments,
      channels,
      inAppMessages,
      log,
    });
    const invalidated = await startDeviceInvalidatedConsumer({ nc, names, store, metrics, log });
    // Both at once: each waits for its open fetch to run out.
    closers.add(async () => void (await Promise.all([appDeleted.stop(), invalidated.stop()])));

    const service = new DeviceRegistryServiceImpl({
      store,
      segments,
      endpointPolicy: { allowPrivate: config.webPushAllowPrivate, allowedHosts: config.webPushAllowedHosts },
      metrics,
    });
    const rpc = await startRpcServer({
      routes: (router) =>
        router
          .service(DeviceRegistryService, service)
          .service(AndroidChannelService, new AndroidChannelServiceImpl(channels))
          .service(
            InAppMessageService,
            new InAppMessageServiceImpl({ messages: inAppMessages, segments, devices: store }),
          ),
      port: config.port,
      log,
    });
    closers.add(() => rpc.close());
    const admin = await startDataAdmin(config.adminPort, registry, data, closers);
    return { port: rpc.port, adminPort: admin.port };
  });
}
