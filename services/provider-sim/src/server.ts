import http2 from "node:http2";
import { randomInt } from "node:crypto";
import type { Logger } from "@herald/runtime";
import { startAdminApi } from "./admin-api.js";
import { sharedAdminRoutes } from "./admin-routes.js";
import { ensureCertificates } from "./ca.js";
import type { Config } from "./config.js";
import { Faults } from "./faults.js";
import { sendJson } from "./http-util.js";
import type { ProviderHandler, ProviderRequest, ProviderResponse } from "./platform.js";
import { Recorder } from "./recorder.js";
import { Stats } from "./stats.js";
import { startTlsServer } from "./tls.js";
import { webPushAdminRoutes } from "./webpush/admin-routes.js";
import { WebPushService } from "./webpush/push-service.js";
import { SubscriptionStore } from "./webpush/subscriptions.js";

export interface ProviderSim {
  port: number;
  adminPort: number;
  /** The CA to trust (NODE_EXTRA_CA_CERTS, or `ca` of a test client). */
  caCertPath: string;
  /** The origin endpoints are issued under, e.g. `https://127.0.0.1:4443`. */
  publicUrl: string;
  close(): Promise<void>;
}

export async function start(config: Config, deps: { log: Logger }): Promise<ProviderSim> {
  const { log } = deps;
  const certs = await ensureCertificates(config.certDir, { hosts: config.certHosts });
  const seed = config.seed ?? randomInt(0, 0x1_0000_0000);
  const recorder = new Recorder(config.maxRecorded);
  const faults = new Faults(seed);
  const stats = new Stats();
  let providers: ProviderHandler[] = [];

  const serve = async (req: ProviderRequest, res: ProviderResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "https://provider-sim");
    const provider = providers.find((p) => p.owns(url.pathname));
    if (!provider) {
      sendJson(res, 404, { reason: "NotFound" });
      stats.count(undefined, 404);
      return;
    }
    const { latencyMs, action } = faults.decide(provider.platform);
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    if (action.kind === "drop") {
      drop(req);
      stats.count(provider.platform, undefined);
      return;
    }
    if (action.kind === "none") await provider.handle(req, res, url);
    else provider.refuseWithFault(res, action);
    stats.count(provider.platform, res.statusCode);
  };

  const tls = await startTlsServer({
    port: config.port,
    certs,
    handler: (req, res) =>
      void serve(req, res).catch((err: unknown) => {
        log.error({ err, path: req.url?.split("?")[0] }, "provider request failed");
        if (!res.headersSent) sendJson(res, 500, { reason: "InternalServerError" });
      }),
  });
  // The endpoints' origin depends on the port the TLS server got (tests use port 0).
  // No request can arrive before this line: connections are handled on a later tick.
  const publicUrl = config.publicUrl ?? `https://127.0.0.1:${tls.port}`;
  const subscriptions = new SubscriptionStore(publicUrl);
  providers = [new WebPushService(subscriptions, recorder, publicUrl, log)];

  const admin = await startAdminApi({
    port: config.adminPort,
    routes: [...sharedAdminRoutes({ recorder, faults, stats }), ...webPushAdminRoutes(subscriptions)],
    log,
  }).catch(async (err: unknown) => {
    await tls.close();
    throw err;
  });
  log.info({ seed, publicUrl, caCertPath: certs.caCertPath }, "provider simulator ready");

  return {
    port: tls.port,
    adminPort: admin.port,
    caCertPath: certs.caCertPath,
    publicUrl,
    close: async () => {
      await Promise.all([tls.close(), admin.close()]);
    },
  };
}

/** An injected drop: no status line, no headers; HTTP/2 resets the stream, HTTP/1.1 cuts the connection. */
function drop(req: ProviderRequest): void {
  if (req instanceof http2.Http2ServerRequest) req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  else req.socket.destroy();
}
