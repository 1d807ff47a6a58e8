import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { ConnectError, Code, createConnectRouter, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import { tracingServerInterceptor } from "./tracing.js";

export interface RpcServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Logs failures and makes sure that anything but a deliberate ConnectError reaches the
 * caller as a bare INTERNAL with no detail: internals stay in the log.
 */
export function errorInterceptor(log: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError && err.code !== Code.Internal && err.code !== Code.Unknown) throw err;
      log.error({ err, procedure: req.method.name }, "rpc failed");
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

/** Serves Connect, gRPC and gRPC-Web over cleartext HTTP/2 (h2c). */
export async function startRpcServer(opts: {
  routes: (router: ConnectRouter) => void;
  port: number;
  host?: string;
  log: Logger;
  interceptors?: Interceptor[];
}): Promise<RpcServer> {
  const server = http2.createServer(
    rpcHandler(
      opts.routes,
      [tracingServerInterceptor(), errorInterceptor(opts.log), ...(opts.interceptors ?? [])],
      opts.log,
    ),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Ask clients to go away once in-flight streams finish; do not cut them off.
        for (const s of sessions) s.close();
      }),
  };
}

/**
 * connectNodeAdapter's request handler, except that a response that cannot be written
 * (typically: the client cancelled a stream) is logged through our logger, at debug
 * level for cancellations, instead of console.error.
 */
function rpcHandler(routes: (router: ConnectRouter) => void, interceptors: Interceptor[], log: Logger) {
  const router = createConnectRouter({ interceptors });
  routes(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    const handler = handlers.get(req.url.split("?", 2)[0] ?? "");
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    handler(universalRequestFromNodeRequest(req, res, undefined, undefined))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        const code = ConnectError.from(reason).code;
        const level = code === Code.Aborted || code === Code.Canceled ? "debug" : "warn";
        log[level]({ err: reason, procedure: handler.method.name }, "rpc response not completed");
      });
  };
}
