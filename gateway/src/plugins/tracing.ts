import { ATTR, trace } from "@herald/runtime";
import type { FastifyInstance } from "fastify";

/**
 * Names the HTTP server span (started by the HTTP instrumentation, which also continues
 * an incoming W3C traceparent) after the route template, never the raw path, and adds
 * the app id a request names, if any.
 */
export function registerTracing(app: FastifyInstance): void {
  app.addHook("preHandler", async (request) => {
    const span = trace.getActiveSpan();
    if (!span) return;
    const route = request.routeOptions.url;
    if (route) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute("http.route", route);
    }
    const body = request.body as { app_id?: unknown } | undefined;
    const appId = (request.params as { id?: unknown } | undefined)?.id;
    if (typeof body?.app_id === "string") span.setAttribute(ATTR.appId, body.app_id);
    else if (typeof appId === "string" && route?.startsWith("/v1/apps/")) span.setAttribute(ATTR.appId, appId);
  });
}
