import { registerConsumerBacklog, type NatsConnection, type Pool, type StreamNames } from "@herald/runtime";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export interface CampaignMetrics {
  campaignsCreated: Counter<"target" | "status">;
  batchesPublished: Counter<"platform" | "result">;
  targetsPublished: Counter<"platform">;
  outcomesRecorded: Counter<"kind">;
  fanoutDuration: Histogram<"result">;
}

export function createCampaignMetrics(registry: Registry): CampaignMetrics {
  return {
    campaignsCreated: new Counter({
      name: "herald_campaigns_created_total",
      help: "Campaigns created, by target kind and initial status (scheduled or queued)",
      labelNames: ["target", "status"],
      registers: [registry],
    }),
    batchesPublished: new Counter({
      name: "herald_delivery_batches_published_total",
      help: "Delivery batches published, by whether JetStream stored them or dropped them as a duplicate (a re-publish after an interruption)",
      labelNames: ["platform", "result"],
      registers: [registry],
    }),
    targetsPublished: new Counter({
      name: "herald_delivery_targets_published_total",
      help: "Devices handed to the senders in accepted delivery batches",
      labelNames: ["platform"],
      registers: [registry],
    }),
    outcomesRecorded: new Counter({
      name: "herald_outcomes_recorded_total",
      help: "Per-device outcomes recorded (redelivered duplicates excluded), by kind",
      labelNames: ["kind"],
      registers: [registry],
    }),
    fanoutDuration: new Histogram({
      name: "herald_fanout_duration_seconds",
      help: "Time one replica spent fanning out a campaign, by how it ended",
      labelNames: ["result"],
      buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
      registers: [registry],
    }),
  };
}

/** How long a campaigns-by-status count is reused between scrapes. */
const STATUS_COUNT_TTL_MS = 5_000;

/**
 * Gauges read at scrape time: campaigns by status (one grouped count, cached a few
 * seconds), each sender's JetStream backlog — the figure KEDA scales on, exported here
 * because a sender scaled to zero exports nothing —, and the outcome consumer's own.
 */
export function registerCampaignGauges(registry: Registry, pool: Pool, nc: NatsConnection, names: StreamNames): void {
  let cached: { at: number; rows: { status: string; n: string }[] } | undefined;
  new Gauge({
    name: "herald_campaigns",
    help: "Campaigns by status",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      if (!cached || Date.now() - cached.at > STATUS_COUNT_TTL_MS) {
        const { rows } = await pool.query<{ status: string; n: string }>(
          "SELECT status, count(*) AS n FROM campaigns GROUP BY status",
        );
        cached = { at: Date.now(), rows };
      }
      this.reset();
      for (const status of ["scheduled", "queued", "sending", "completed", "cancelled", "failed"])
        this.set({ status }, 0);
      for (const r of cached.rows) this.set({ status: r.status }, Number(r.n));
    },
  });
  registerConsumerBacklog(registry, nc, {
    name: "herald_sender_backlog_batches",
    help: "Delivery batches waiting for or held by a sender's durable consumer (pending + ack pending): what KEDA scales a sender on",
    labelNames: ["platform"],
    consumers: (["ios", "android", "web"] as const).map((platform) => ({
      labels: { platform },
      stream: names.deliveryStream,
      durable: names.consumer(`sender-${platform}`),
    })),
  });
  registerConsumerBacklog(registry, nc, {
    name: "herald_outcomes_backlog_messages",
    help: "Outcome batches not yet recorded by the campaign service (pending + ack pending)",
    labelNames: [],
    consumers: [{ labels: {}, stream: names.outcomesStream, durable: names.consumer("campaign-outcomes") }],
  });
}
