import type { FastifyInstance } from "fastify";
import type { ReadinessCheck } from "../readiness.js";
import { healthzSchema, readyzSchema } from "../schemas/health.js";

/** Probes for the cluster; no authentication. */
export function registerHealthRoutes(app: FastifyInstance, ready: ReadinessCheck): void {
  app.get("/healthz", { schema: healthzSchema }, async () => ({ status: "ok" }));

  app.get("/readyz", { schema: readyzSchema }, async (_request, reply) => {
    const checks = await ready();
    const ok = Object.values(checks).every(Boolean);
    return reply.code(ok ? 200 : 503).send({ status: ok ? "ok" : "unavailable", checks });
  });
}
