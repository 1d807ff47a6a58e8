import type { FastifyInstance } from "fastify";
import { errorReply, toErrorReply } from "../http-errors.js";

/**
 * Every failure leaves as the API's JSON error (docs/design.md §3 Errors): schema
 * violations, unparsable or oversized bodies, unknown routes, backend errors. The mapping
 * lives in http-errors.ts; this only wires it into fastify and logs what is ours to fix.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const out = toErrorReply(err);
    if (out.internal) request.log.error({ err }, "request failed");
    if (out.status === 401) reply.header("www-authenticate", 'Bearer realm="herald"');
    return reply.code(out.status).type("application/json; charset=utf-8").send(out.body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0]!.slice(0, 200);
    const out = errorReply("NotFound", `no route ${request.method} ${path}`);
    return reply.code(out.status).type("application/json; charset=utf-8").send(out.body);
  });
}
