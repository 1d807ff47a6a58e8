import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "@herald/runtime";

/**
 * Query parameters whose values are secrets: an invitation link's token, the
 * authorization code on the console's callback, and what OAuth clients might put in a URL.
 */
const SECRET_PARAMS = new Set([
  "token",
  "code",
  "code_verifier",
  "refresh_token",
  "access_token",
  "id_token_hint",
  "client_secret",
  "password",
]);

/** The URL as it may be logged: secret query values replaced, everything else kept. */
export function loggableUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let redacted = false;
  for (const name of new Set(params.keys())) {
    if (SECRET_PARAMS.has(name.toLowerCase())) {
      params.set(name, "[redacted]");
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, q)}?${params.toString()}` : url;
}

/** Fastify's request log fields, with the URL made loggable. */
function requestLogView(request: FastifyRequest) {
  return {
    method: request.method,
    url: loggableUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** The gateway's logger: request lines never carry a secret from the URL. */
export function requestLogger(log: Logger): Logger {
  return log.child({}, { serializers: { req: requestLogView } });
}

/**
 * One line per request, when its answer has gone: the request (method, URL made loggable,
 * host, client), the status and the time taken, under the request's `request_id`.
 * Fastify's own request logging writes two ("incoming request", then "request completed"),
 * which at the default level was the largest part of the gateway's cost per registration
 * (docs/benchmarks.md); its own is switched off in app.ts. Paths in `quiet` are not logged.
 */
export function registerRequestLog(app: FastifyInstance, quiet: ReadonlySet<string>): void {
  app.addHook("onResponse", async (request, reply) => {
    if (quiet.has(request.url)) return;
    request.log.info(
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      "request completed",
    );
  });
}
