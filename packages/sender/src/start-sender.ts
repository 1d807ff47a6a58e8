import { CredentialService } from "@herald/proto/credential";
import { OutcomeKind } from "@herald/proto/delivery";
import { platformFromSubject } from "./platform.js";
import {
  allReady,
  connectNats,
  createMetricsRegistry,
  createRpcClient,
  startAdminServer,
  natsReady,
  configuredStreams,
  type Logger,
  type ReadyCheck,
} from "@herald/runtime";
import { BatchProcessor } from "./batch-processor.js";
import { CredentialsCache } from "./credentials-cache.js";
import { startDeliveryConsumer } from "./delivery-consumer.js";
import type { SendCapacity } from "./http2-pool.js";
import type { Provider } from "./provider.js";
import { sendSlots } from "./send-slots.js";
import type { SenderConfig } from "./sender-config.js";
import { senderMetrics } from "./sender-metrics.js";

const OUTCOME_NAMES: Partial<Record<OutcomeKind, "delivered" | "bounced" | "failed" | "throttled">> = {
  [OutcomeKind.DELIVERED]: "delivered",
  [OutcomeKind.BOUNCED]: "bounced",
  [OutcomeKind.FAILED]: "failed",
  [OutcomeKind.THROTTLED]: "throttled",
};

export interface RunningSender {
  adminPort: number;
  close(): Promise<void>;
}

/**
 * Wires a provider into the shared machinery: credential client and cache, the
 * JetStream delivery consumer, retries, metrics and the health/metrics endpoint. The
 * same function runs in production, dev mode and tests.
 */
export async function startSender<C>(
  config: SenderConfig,
  provider: Provider<C>,
  deps: {
    log: Logger;
    /** What else must answer for the sender to be ready (e.g. Redis). */
    ready?: ReadyCheck;
    /** The provider's HTTP/2 connections: they size the sends in flight (send-slots.ts). */
    capacity?: SendCapacity;
  },
): Promise<RunningSender> {
  const { log } = deps;
  const registry = createMetricsRegistry(`sender-${provider.platform}`);
  const sendLimiter = sendSlots(config.maxInFlight, deps.capacity);
  const metrics = senderMetrics(registry, provider.platform, sendLimiter);
  provider.registerMetrics?.(registry);
  const credentialRpc = createRpcClient(CredentialService, config.credentialUrl);
  const platform = platformFromSubject(provider.platform);
  const credentials = new CredentialsCache<C>(
    async (appId, p) => credentialRpc.client.getSendCredentials({ appId, platform: p }),
    (r) => provider.prepareCredentials(r),
    platform,
  );
  const processor = new BatchProcessor<C>({
    provider,
    credentials,
    sendLimiter,
    policy: {
      maxAttempts: config.retryMaxAttempts,
      baseDelayMs: config.retryBaseMs,
      maxDelayMs: config.retryMaxDelayMs,
      maxElapsedMs: config.retryMaxElapsedMs,
    },
    onResult: metrics.onResult,
  });
  const nc = await connectNats(config.natsUrl, `sender-${provider.platform}`, log);
  const consumer = await startDeliveryConsumer({
    nc,
    names: configuredStreams(config),
    platform: provider.platform,
    processor: processor as BatchProcessor<unknown>,
    log,
    concurrentBatches: config.concurrentBatches,
    ackWaitMs: config.ackWaitMs,
    drainMs: config.drainMs,
    onBatch: (_batch, ms, outcomes) => {
      metrics.onBatch(ms);
      for (const o of outcomes) metrics.onOutcome(OUTCOME_NAMES[o.kind] ?? "failed");
    },
  });
  const admin = await startAdminServer({
    port: config.adminPort,
    registry,
    ready: deps.ready ? allReady(natsReady(nc), deps.ready) : natsReady(nc),
  });
  log.info({ platform: provider.platform, adminPort: admin.port }, "sender started");
  return {
    adminPort: admin.port,
    async close() {
      await consumer.stop();
      sendLimiter.stop?.();
      await nc.drain();
      await provider.close();
      credentialRpc.close();
      await admin.close();
    },
  };
}
