import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export interface WebhookMetrics {
  attempts: Counter<"outcome">;
  latency: Histogram;
  events: Counter<"result">;
  endpointsDisabled: Counter<"cause">;
}

/** Every replica reads the same shared counts (the deliveries table), so a query takes their max. */
export function createWebhookMetrics(
  registry: Registry,
  counts: { backlog: () => Promise<number>; due: () => Promise<number> },
): WebhookMetrics {
  new Gauge({
    name: "herald_webhook_backlog_deliveries",
    help: "Webhook deliveries not yet delivered nor given up (pending, including those waiting for a retry)",
    registers: [registry],
    async collect() {
      this.set(await counts.backlog());
    },
  });
  // The work the dispatcher has now: what the chart's KEDA trigger scales the component on.
  new Gauge({
    name: "herald_webhook_due_deliveries",
    help: "Pending webhook deliveries whose attempt is due now (in flight or waiting for a free slot)",
    registers: [registry],
    async collect() {
      this.set(await counts.due());
    },
  });
  return {
    attempts: new Counter({
      name: "herald_webhook_attempts_total",
      help: "Webhook delivery attempts, by outcome: delivered, retry (failed, will retry), failed (given up), gone (410, endpoint disabled)",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    latency: new Histogram({
      name: "herald_webhook_attempt_duration_seconds",
      help: "Duration of webhook delivery attempts (the POST, until the response or the failure)",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    events: new Counter({
      name: "herald_webhook_events_total",
      help: "Webhook events consumed, by result: recorded, duplicate, dropped (unusable)",
      labelNames: ["result"],
      registers: [registry],
    }),
    endpointsDisabled: new Counter({
      name: "herald_webhook_endpoints_disabled_total",
      help: "Webhook endpoints the dispatcher disabled, by cause: gone (answered 410), failing (no success for HERALD_WEBHOOK_DISABLE_AFTER_MS)",
      labelNames: ["cause"],
      registers: [registry],
    }),
  };
}
