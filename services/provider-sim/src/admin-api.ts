import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@herald/runtime/service";
import { InputError } from "./errors.js";
import { readBody, sendJson } from "./http-util.js";

/**
 * The simulator's control surface, JSON over plain HTTP/1.1 on its own port: tests
 * and benchmarks create subscriptions, switch faults on, and read back deliveries.
 * Routes come from the shared part (deliveries, faults, stats) and from each platform.
 */
export interface AdminRequest {
  /** Capture groups of the route's path pattern. */
  params: string[];
  query: URLSearchParams;
  body: unknown;
}

export interface AdminReply {
  status: number;
  body?: unknown;
}

export interface AdminRoute {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: RegExp;
  handle(req: AdminRequest): Promise<AdminReply> | AdminReply;
}

const MAX_ADMIN_BODY = 1 << 20;

export interface AdminApi {
  port: number;
  close(): Promise<void>;
}

export async function startAdminApi(opts: { port: number; routes: AdminRoute[]; log: Logger }): Promise<AdminApi> {
  const server = http.createServer((req, res) => {
    void dispatch(req, res, opts.routes).catch((err: unknown) => {
      opts.log.error({ err, method: req.method, path: req.url?.split("?")[0] }, "admin request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "InternalError", message: "internal error" });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

async function dispatch(req: http.IncomingMessage, res: http.ServerResponse, routes: AdminRoute[]): Promise<void> {
  const url = new URL(req.url ?? "/", "http://admin");
  const matching = routes.map((r) => ({ route: r, m: r.path.exec(url.pathname) })).filter((x) => x.m !== null);
  if (matching.length === 0) {
    sendJson(res, 404, { error: "NotFound", message: `no route ${url.pathname}` });
    return;
  }
  const hit = matching.find((x) => x.route.method === req.method);
  if (!hit) {
    const allow = [...new Set(matching.map((x) => x.route.method))].join(", ");
    sendJson(res, 405, { error: "MethodNotAllowed", message: `use ${allow}` }, { allow });
    return;
  }
  const raw = await readBody(req, MAX_ADMIN_BODY);
  if (raw.tooLarge) {
    sendJson(res, 413, { error: "PayloadTooLarge", message: `body over ${MAX_ADMIN_BODY} bytes` });
    return;
  }
  let body: unknown;
  if (raw.bytes.length > 0) {
    try {
      body = JSON.parse(raw.bytes.toString("utf8"));
    } catch {
      sendJson(res, 400, { error: "ValidationError", message: "body is not valid JSON" });
      return;
    }
  }
  let reply: AdminReply;
  try {
    reply = await hit.route.handle({ params: hit.m!.slice(1), query: url.searchParams, body });
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    sendJson(res, 400, { error: "ValidationError", message: err.message });
    return;
  }
  if (reply.body === undefined) res.writeHead(reply.status).end();
  else sendJson(res, reply.status, reply.body);
}

/** An optional integer query parameter within bounds. */
export function intParam(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new InputError(`${name} must be an integer from ${min} to ${max}`);
  }
  return Number(raw);
}
