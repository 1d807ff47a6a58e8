import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface AdminServer {
  port: number;
  close(): Promise<void>;
}

/**
 * HTTP/1.1 endpoints for the cluster: /healthz (alive), /readyz (dependencies up) and
 * /metrics (Prometheus). Kept apart from the h2c RPC port so probes and scrapers need
 * nothing special.
 */
export async function startAdminServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  ready?: () => Promise<boolean>;
}): Promise<AdminServer> {
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.url === "/healthz") {
        res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      } else if (req.url === "/readyz") {
        const ok = await (opts.ready?.() ?? Promise.resolve(true)).catch(() => false);
        res
          .writeHead(ok ? 200 : 503, { "content-type": "application/json" })
          .end(JSON.stringify({ status: ok ? "ok" : "unavailable" }));
      } else if (req.url === "/metrics") {
        res.writeHead(200, { "content-type": opts.registry.contentType }).end(await opts.registry.metrics());
      } else {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"NotFound","message":"not found"}');
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
