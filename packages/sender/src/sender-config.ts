import { commonEnv, int, port, url } from "@herald/runtime";

// Senders keep no database: only NATS and logging of the common variables.
const { logLevel, natsUrl, natsNamespace, natsStreamReplicas, natsPlacementTags } = commonEnv;
const natsAndLogging = { logLevel, natsUrl, natsNamespace, natsStreamReplicas, natsPlacementTags };

/** Environment every sender shares; a sender spreads this into its own spec. */
export function senderEnv(defaultAdminPort: number) {
  return {
    ...natsAndLogging,
    adminPort: port("ADMIN_PORT", defaultAdminPort),
    credentialUrl: url("CREDENTIAL_URL", "http://127.0.0.1:7003"),
    concurrentBatches: int("SENDER_CONCURRENT_BATCHES", 8, 1, 1_000),
    /**
     * A memory cap on sends in flight: below it, the provider connections' streams decide
     * (send-slots.ts). 4,096 is above what the default batches hold (8 × 500 devices).
     */
    maxInFlight: int("SENDER_MAX_IN_FLIGHT", 4_096, 1, 100_000),
    retryMaxAttempts: int("SENDER_RETRY_MAX_ATTEMPTS", 6, 1, 100),
    retryBaseMs: int("SENDER_RETRY_BASE_MS", 500, 1, 600_000),
    retryMaxDelayMs: int("SENDER_RETRY_MAX_DELAY_MS", 30_000, 1, 3_600_000),
    retryMaxElapsedMs: int("SENDER_RETRY_MAX_ELAPSED_MS", 120_000, 1, 3_600_000),
    ackWaitMs: int("SENDER_ACK_WAIT_MS", 60_000, 1_000, 3_600_000),
    drainMs: int("SENDER_DRAIN_MS", 20_000, 0, 3_600_000),
    /** TCP, TLS and the provider's first SETTINGS, per new HTTP/2 connection. */
    connectTimeoutMs: int("SENDER_CONNECT_TIMEOUT_MS", 10_000, 100, 600_000),
    /** An HTTP/2 connection that heard nothing for this long gets a PING; an unanswered one is closed. 0: off. */
    pingIntervalMs: int("SENDER_PING_INTERVAL_MS", 60_000, 0, 3_600_000),
  };
}

export interface SenderConfig {
  logLevel: string;
  natsUrl: string;
  natsNamespace: string;
  natsStreamReplicas: number;
  natsPlacementTags: string[];
  adminPort: number;
  credentialUrl: string;
  concurrentBatches: number;
  maxInFlight: number;
  retryMaxAttempts: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  retryMaxElapsedMs: number;
  ackWaitMs: number;
  drainMs: number;
  connectTimeoutMs: number;
  pingIntervalMs: number;
}
