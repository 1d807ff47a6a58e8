import type { FastifyInstance } from "fastify";
import { Counter, Histogram, type Registry } from "prom-client";
import { metricsSchema } from "../schemas/health.js";

export interface GatewayMetrics {
  registry: Registry;
  requests: Counter<"route" | "method" | "status">;
  duration: Histogram<"route" | "method" | "status">;
  rateLimited: Counter;
  rateLimitStoreErrors: Counter;
  authFailures: Counter<"reason">;
}

export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  const registers = [registry];
  return {
    registry,
    requests: new Counter({
      name: "herald_gateway_requests_total",
      help: "HTTP requests answered, by route pattern, method and status",
      labelNames: ["route", "method", "status"],
      registers,
    }),
    duration: new Histogram({
      name: "herald_gateway_request_duration_seconds",
      help: "Time from receiving a request to answering it, by route pattern, method and status",
      labelNames: ["route", "method", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimited: new Counter({
      name: "herald_gateway_rate_limited_total",
      help: "Requests refused with 429 because the key's per-minute limit was used up",
      registers,
    }),
    rateLimitStoreErrors: new Counter({
      name: "herald_gateway_rate_limit_store_errors_total",
      help: "Requests let through uncounted because Redis did not answer (the limiter fails open)",
      registers,
    }),
    authFailures: new Counter({
      name: "herald_gateway_auth_failures_total",
      help: "Requests refused with 401, by reason",
      labelNames: ["reason"],
      registers,
    }),
  };
}

/** Counts every answer and serves GET /metrics (no authentication). */
export function registerMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook("onResponse", async (request, reply) => {
    // Route patterns, not raw URLs, keep the label set small whatever clients send.
    const labels = {
      route: request.routeOptions.url ?? "unmatched",
      method: request.method,
      status: String(reply.statusCode),
    };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, reply.elapsedTime / 1000);
  });
  app.get("/metrics", { schema: metricsSchema }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
