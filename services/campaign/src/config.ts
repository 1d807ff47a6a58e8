import { commonEnv, int, port, str, url, type EnvVar } from "@herald/runtime";

export const configSpec = {
  ...commonEnv,
  port: port("PORT", 7002),
  adminPort: port("ADMIN_PORT", 7102),
  schema: str("DB_SCHEMA", "campaign"),
  deviceRegistryUrl: url("DEVICE_REGISTRY_URL", "http://127.0.0.1:7001"),
  /** Devices per StreamAudience message. */
  fanoutPageSize: int("FANOUT_PAGE_SIZE", 1000, 1, 5000),
  /** Targets per DeliveryBatch. */
  fanoutBatchSize: int("FANOUT_BATCH_SIZE", 500, 1, 5000),
  schedulerIntervalMs: int("SCHEDULER_INTERVAL_MS", 1000, 10, 3_600_000),
  /** How long a replica owns a campaign's fan-out without renewing; then another may take over. */
  fanoutLeaseMs: int("FANOUT_LEASE_MS", 30_000, 1_000, 3_600_000),
  /** Campaigns fanned out at once by one replica. */
  fanoutConcurrency: int("FANOUT_CONCURRENCY", 2, 1, 64),
  /** Per-device receipts (and engagement rows) older than this many days are pruned; campaign stats stay. */
  receiptRetentionDays: int("HERALD_RECEIPT_RETENTION_DAYS", 30, 1, 3650),
};

export type Config = { [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never };
