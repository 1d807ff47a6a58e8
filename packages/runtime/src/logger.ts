import { trace } from "@opentelemetry/api";
import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

/**
 * Paths that may carry secrets. pino replaces them before a line is written, so a
 * careless `log.info({ req })` still cannot leak a key or a push token.
 */
export const REDACTED_PATHS = [
  "secret",
  "*.secret",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "*.headers.authorization",
  "pushToken",
  "push_token",
  "*.pushToken",
  "*.push_token",
  "p8Key",
  "*.p8Key",
  "apns_p8_key",
  "*.apns_p8_key",
  "privateKey",
  "*.privateKey",
  "private_key",
  "*.private_key",
  "vapid_private_key",
  "*.vapid_private_key",
  "serviceAccountJson",
  "*.serviceAccountJson",
  "fcm_service_account",
  "*.fcm_service_account",
];

export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name: service,
      level,
      base: { service },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: traceIds,
    },
    destination,
  );
}

/** trace_id and span_id of the active span, so that a log line leads to its trace. */
function traceIds(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & 1 ? { trace_id: traceId, span_id: spanId } : {};
}

/** The first characters of a secret-like value, enough to tell two apart in a log line. */
export function fingerprintForLog(value: string): string {
  return value.length <= 8 ? "[short]" : `${value.slice(0, 6)}…(${value.length})`;
}
