const tags = ["Operations"];
const publicRoute = { tags, security: [] as Record<string, string[]>[] };

const status = {
  type: "object",
  required: ["status"],
  additionalProperties: false,
  properties: {
    status: { type: "string", enum: ["ok", "unavailable"] },
    checks: {
      type: "object",
      description: "Whether each dependency answered.",
      additionalProperties: { type: "boolean" },
    },
  },
} as const;

export const healthzSchema = {
  ...publicRoute,
  operationId: "healthz",
  summary: "Liveness",
  description: "Answers while the process runs. No authentication.",
  response: { 200: { description: "Alive.", ...status } },
};

export const readyzSchema = {
  ...publicRoute,
  operationId: "readyz",
  summary: "Readiness",
  description:
    "200 when Redis and the credential, device-registry and campaign services answer, else 503. No authentication.",
  response: {
    200: { description: "Ready.", ...status },
    503: { description: "A dependency is down.", ...status },
  },
};

export const metricsSchema = {
  ...publicRoute,
  operationId: "metrics",
  summary: "Prometheus metrics",
  description:
    "Request counts and durations by route, method and status; rate-limit rejections; auth failures. No authentication.",
  response: {
    200: {
      description: "Prometheus text exposition format.",
      content: { "text/plain": { schema: { type: "string" } } },
    },
  },
};
