import { register } from "node:module";
import type { Span } from "@opentelemetry/api";
import { packageVersion } from "./package-dir.js";

export interface Telemetry {
  /** True when spans are exported. */
  enabled: boolean;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/** Paths that probes and scrapers call every few seconds: never traced. */
const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

const version = packageVersion("@herald/runtime");

/** Tracing is on when an OTLP endpoint is named and the SDK is not disabled (the standard variables). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? "").toLowerCase() === "true") return false;
  if ((env.OTEL_TRACES_EXPORTER ?? "otlp").toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The service version and Kubernetes identity (the chart's downward API env) as resource attributes. */
export function resourceAttributes(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = { "service.version": version };
  if (env.POD_NAME) out["k8s.pod.name"] = env.POD_NAME;
  if (env.POD_NAMESPACE) out["k8s.namespace.name"] = env.POD_NAMESPACE;
  if (env.NODE_NAME) out["k8s.node.name"] = env.NODE_NAME;
  return out;
}

/**
 * An outgoing URL can be a secret (a Web Push endpoint's path is the subscription's
 * capability): client spans keep the origin only.
 */
function keepOriginOnly(span: Span): void {
  const attrs = (span as unknown as { attributes?: Record<string, unknown> }).attributes ?? {};
  for (const key of ["url.full", "http.url"]) {
    const value = attrs[key];
    if (typeof value !== "string") continue;
    try {
      span.setAttribute(key, new URL(value).origin);
    } catch {
      span.setAttribute(key, "");
    }
  }
  for (const key of ["url.path", "url.query", "http.target"]) if (key in attrs) span.setAttribute(key, "");
}

/**
 * OpenTelemetry for one process, configured by the standard OTEL_* variables only
 * (endpoint, protocol — http/protobuf, http/json or grpc —, service name, resource
 * attributes, sampler). Called before the role's modules are imported, so that the
 * PostgreSQL, Redis and HTTP instrumentations can patch them as they load. With no
 * endpoint set nothing starts: no exporter, no instrumentation, no cost beyond the
 * API's no-op calls.
 *
 * Metrics stay with Prometheus (/metrics) and logs with stdout: only traces are exported.
 */
export async function startTelemetry(role: string, env: NodeJS.ProcessEnv = process.env): Promise<Telemetry> {
  if (!tracingRequested(env)) return { enabled: false, shutdown: async () => undefined };
  // Loaded only when tracing is on: the SDK and its instrumentations are tens of MB of
  // memory that a process without an endpoint should not carry.
  const [
    { HttpInstrumentation },
    { IORedisInstrumentation },
    { PgInstrumentation },
    { resourceFromAttributes },
    { NodeSDK },
  ] = await Promise.all([
    import("@opentelemetry/instrumentation-http"),
    import("@opentelemetry/instrumentation-ioredis"),
    import("@opentelemetry/instrumentation-pg"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/sdk-node"),
  ]);
  env.OTEL_SERVICE_NAME ||= `herald-${role}`;
  env.OTEL_METRICS_EXPORTER ||= "none";
  env.OTEL_LOGS_EXPORTER ||= "none";
  // The role's modules are ES modules: import-in-the-middle lets the instrumentations
  // patch them (and node:http) as they are imported.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME,
    // Merged with OTEL_RESOURCE_ATTRIBUTES and the host/process detectors.
    resource: resourceFromAttributes(resourceAttributes(env)),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => QUIET_PATHS.has((req.url ?? "").split("?")[0] ?? ""),
        requestHook: (span, request) => {
          if (!("headers" in request && "httpVersion" in request)) keepOriginOnly(span);
        },
      }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      // Statements without their arguments: a Redis key can hold an API key's hash, never a value.
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown().catch(() => undefined) };
}
