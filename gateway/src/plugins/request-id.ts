import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";

/** Ids a client or proxy may choose: short, and safe to log and echo. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** For the fastify constructor: an incoming X-Request-Id when sane, else a fresh UUID. */
export function genReqId(req: IncomingMessage): string {
  const incoming = req.headers["x-request-id"];
  return typeof incoming === "string" && SANE_ID.test(incoming) ? incoming : randomUUID();
}

/** Echoes the request id on every answer, so a client can quote it when reporting a problem. */
export function registerRequestId(app: FastifyInstance): void {
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
}
