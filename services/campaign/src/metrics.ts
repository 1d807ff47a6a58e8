import { Counter, Histogram, type Registry } from "prom-client";

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
