import { Counter, Histogram, type Registry } from "prom-client";
import type { SendResult } from "./provider.js";

/** What a sender reports to Prometheus. */
export function senderMetrics(registry: Registry, platform: string) {
  const attempts = new Counter({
    name: "herald_sender_attempts_total",
    help: "Send attempts by result",
    labelNames: ["platform", "result"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "herald_sender_attempt_seconds",
    help: "Duration of one send attempt",
    labelNames: ["platform"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const batches = new Histogram({
    name: "herald_sender_batch_seconds",
    help: "Duration of one delivery batch, retries included",
    labelNames: ["platform"],
    buckets: [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  return {
    onResult(result: SendResult, ms: number) {
      attempts.inc({ platform, result: result.kind === "retry" && result.throttled ? "throttled" : result.kind });
      latency.observe({ platform }, ms / 1000);
    },
    onBatch(ms: number) {
      batches.observe({ platform }, ms / 1000);
    },
  };
}
