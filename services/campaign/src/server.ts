import path from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { CampaignService } from "@herald/proto/campaign";
import { AndroidChannelService } from "@herald/proto/android_channel";
import { DeviceRegistryService } from "@herald/proto/device";
import {
  createMetricsRegistry,
  createRpcClient,
  deliveryStreamConfig,
  ensureStream,
  openServiceData,
  outcomesStreamConfig,
  startDataAdmin,
  startRpcServer,
  startWithClosers,
  type Logger,
  OutboxRelay,
  packageDir,
  registerOutboxMetrics,
  WEBHOOK_OUTBOX_KIND,
  webhookOutboxKind,
  webhooksStreamConfig,
} from "@herald/runtime";
import { RegistryAndroidChannels } from "./android-channels.js";
import { RegistryAudience } from "./audience-source.js";
import { JetStreamBatchPublisher } from "./batch-publisher.js";
import { CampaignServiceImpl } from "./campaign-service.js";
import type { Config } from "./config.js";
import { EngagementRecorder } from "./engagement-recorder.js";
import { EngagementStore } from "./engagement-store.js";
import { FanoutRunner } from "./fanout-runner.js";
import { FanoutStore } from "./fanout-store.js";
import { FanoutWorkers } from "./fanout-workers.js";
import { createCampaignMetrics, registerCampaignGauges } from "./metrics.js";
import { startOutcomeConsumer } from "./outcome-consumer.js";
import { OutcomeStore } from "./outcome-store.js";
import { ReceiptRetention } from "./receipt-retention.js";
import { ReceiptStore } from "./receipt-store.js";
import { Scheduler } from "./scheduler.js";
import { PgCampaignStore } from "./campaign-store.js";

const MIGRATIONS = path.join(packageDir("@herald/campaign"), "migrations");

export interface CampaignApp {
  port: number;
  adminPort: number;
  close(): Promise<void>;
}

/** Wires the service; the same start() runs in production, dev mode and tests. */
export async function start(config: Config, deps: { log: Logger }): Promise<CampaignApp> {
  const { log } = deps;
  return startWithClosers(log, async (closers) => {
    const data = await openServiceData(config, { name: "campaign", migrations: MIGRATIONS, log }, closers);
    const { pool, nc, names } = data;
    await ensureStream(nc, deliveryStreamConfig(names), log);
    await ensureStream(nc, outcomesStreamConfig(names), log);
    await ensureStream(nc, webhooksStreamConfig(names), log);
    // Webhook events (campaign.*, deliveries.*) leave through the outbox.
    const relay = new OutboxRelay({
      pool,
      js: jetstream(nc),
      kinds: { [WEBHOOK_OUTBOX_KIND]: webhookOutboxKind(names) },
      log,
    });
    const onEvents = () => void relay.flush();

    const registryClient = createRpcClient(DeviceRegistryService, config.deviceRegistryUrl, { timeoutMs: 30_000 });
    closers.add(async () => registryClient.close());
    const audience = new RegistryAudience(registryClient.client);
    const channelsClient = createRpcClient(AndroidChannelService, config.deviceRegistryUrl, { timeoutMs: 30_000 });
    closers.add(async () => channelsClient.close());
    const androidChannels = new RegistryAndroidChannels(channelsClient.client);
    const registry = createMetricsRegistry("campaign");
    const metrics = createCampaignMetrics(registry);
    registerCampaignGauges(registry, pool, nc, names);
    registerOutboxMetrics(registry, pool);

    const store = new PgCampaignStore(pool, onEvents);
    const fanoutStore = new FanoutStore(pool, config.fanoutLeaseMs, onEvents);
    const receipts = new ReceiptStore(pool);
    const runner = new FanoutRunner({
      store: fanoutStore,
      audience,
      publisher: new JetStreamBatchPublisher(jetstream(nc), names),
      pageSize: config.fanoutPageSize,
      batchSize: config.fanoutBatchSize,
      leaseMs: config.fanoutLeaseMs,
      metrics,
      log,
    });
    const workers = new FanoutWorkers({
      claim: (token) => fanoutStore.claim(token),
      run: (job, shutdown) => runner.run(job, shutdown),
      concurrency: config.fanoutConcurrency,
      pollMs: config.schedulerIntervalMs,
      log,
    });
    const scheduler = new Scheduler({
      store,
      intervalMs: config.schedulerIntervalMs,
      log,
      onQueued: () => workers.nudge(),
    });
    const service = new CampaignServiceImpl({
      store,
      audience,
      androidChannels,
      engagement: new EngagementRecorder(new EngagementStore(pool)),
      receipts,
      metrics,
      onQueued: () => workers.nudge(),
    });

    // Started in this order so that close() stops them in reverse: the background loops
    // first (fan-out ends at a batch boundary), then RPC and admin, then NATS and the pool.
    const admin = await startDataAdmin(config.adminPort, registry, data, closers);
    const rpc = await startRpcServer({
      routes: (router) => router.service(CampaignService, service),
      port: config.port,
      log,
    });
    closers.add(() => rpc.close());
    relay.start();
    closers.add(() => relay.stop());
    const outcomes = await startOutcomeConsumer({ nc, names, store: new OutcomeStore(pool), metrics, log, onEvents });
    closers.add(() => outcomes.stop());
    const retention = new ReceiptRetention({ store: receipts, days: config.receiptRetentionDays, log });
    retention.start();
    closers.add(() => retention.stop());
    workers.start();
    closers.add(() => workers.stop());
    scheduler.start();
    closers.add(() => scheduler.stop());
    return { port: rpc.port, adminPort: admin.port };
  });
}
