import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { Limiter } from "./limiter.js";
import type { SendResult } from "./provider.js";

/** Which provider a platform's sender talks to, for the provider-facing series. */
const PROVIDER = { ios: "apns", android: "fcm", web: "webpush" } as const;

/** "2xx", "4xx", … from an HTTP status; "network" when no answer came. */
export function statusClass(status: number | undefined): string {
  return status === undefined ? "network" : `${Math.floor(status / 100)}xx`;
}

/** A function of one bounded string argument, computed once per argument. */
function memo<T>(fn: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = fn(key);
      cache.set(key, value);
    }
    return value;
  };
}

/** What a sender reports to Prometheus. Labels are bounded: platform, provider, result, status class. */
export function senderMetrics(registry: Registry, platform: keyof typeof PROVIDER, sendSlots?: Limiter) {
  const provider = PROVIDER[platform];
  if (sendSlots) {
    new Gauge({
      name: "herald_sender_send_slots",
      help: "Sends this replica lets in flight at once: its provider connections' streams plus a queue margin, capped by SENDER_MAX_IN_FLIGHT",
      labelNames: ["platform"],
      registers: [registry],
      collect() {
        this.set({ platform }, sendSlots.size);
      },
    });
    new Gauge({
      name: "herald_sender_sends_in_flight",
      help: "Sends holding a send slot (on a stream or waiting for one)",
      labelNames: ["platform"],
      registers: [registry],
      collect() {
        this.set({ platform }, sendSlots.holders);
      },
    });
  }
  const attempts = new Counter({
    name: "herald_sender_attempts_total",
    help: "Send attempts by result (delivered, bounced, failed, retry, throttled: a retry the provider asked for by rate-limiting)",
    labelNames: ["platform", "result"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "herald_provider_request_duration_seconds",
    help: "Duration of one request to a push provider, by provider and HTTP status class",
    labelNames: ["provider", "status"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "herald_deliveries_total",
    help: "Devices whose delivery ended, by final outcome (delivered, bounced, failed, throttled)",
    labelNames: ["platform", "outcome"],
    registers: [registry],
  });
  const batches = new Histogram({
    name: "herald_sender_batch_seconds",
    help: "Duration of one delivery batch, retries included",
    labelNames: ["platform"],
    buckets: [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  for (const outcome of ["delivered", "bounced", "failed", "throttled"]) deliveries.inc({ platform, outcome }, 0);
  // Once per notification each: the labelled children are looked up once, not hashed per call.
  const attemptsBy = memo((result: string) => attempts.labels({ platform, result }));
  const latencyBy = memo((status: string) => latency.labels({ provider, status }));
  const deliveriesBy = memo((outcome: string) => deliveries.labels({ platform, outcome }));
  return {
    onResult(result: SendResult, ms: number, status: number | undefined) {
      attemptsBy(result.kind === "retry" && result.throttled ? "throttled" : result.kind).inc();
      latencyBy(statusClass(status)).observe(ms / 1000);
    },
    onOutcome(outcome: "delivered" | "bounced" | "failed" | "throttled") {
      deliveriesBy(outcome).inc();
    },
    onBatch(ms: number) {
      batches.observe({ platform }, ms / 1000);
    },
  };
}
