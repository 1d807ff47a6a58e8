import http2 from "node:http2";
import { randomInt } from "node:crypto";
import type { Logger } from "@herald/runtime/service";
import { startAdminApi } from "./admin-api.js";
import { sharedAdminRoutes } from "./admin-routes.js";
import { ensureCertificates } from "./ca.js";
import type { Config } from "./config.js";
import { ConnectionRegistry, type Connection } from "./connections.js";
import { setUpApns } from "./apns/setup.js";
import { setUpFcm } from "./fcm/setup.js";
import { Faults } from "./faults.js";
import { sendJson } from "./http-util.js";
import type { Platform, ProviderHandler, ProviderRequest, ProviderResponse } from "./platform.js";
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
  const connections = new ConnectionRegistry(config.apnsMaxStreams);
  let providers: ProviderHandler[] = [];

  const serve = async (req: ProviderRequest, res: ProviderResponse, conn: Connection | undefined): Promise<void> => {
    const url = new URL(req.url ?? "/", "https://provider-sim");
    const provider = providers.find((p) => p.owns(url.pathname));
    if (!provider) {
      sendJson(res, 404, { reason: "NotFound" });
      stats.count(undefined, 404);
      return;
    }
    const platform = provider.platform;
    if (!platform) {
      await provider.handle(req, res, url, conn);
      stats.count(undefined, res.statusCode);
      return;
    }
    if (conn && !admitStream(conn, platform, req as http2.Http2ServerRequest)) {
      log.debug({ connection: conn.id, platform }, "stream over the acknowledged limit refused");
      return;
    }
    const { latencyMs, action, goaway } = faults.decide(platform);
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    if (action.kind === "drop") {
      drop(req);
      stats.count(platform, undefined);
      return;
    }
    if (goaway) {
      if (conn) res.once("finish", () => conn.goAway("Shutdown"));
      else res.setHeader("connection", "close");
    }
    if (action.kind === "none") await provider.handle(req, res, url, conn);
    else provider.refuseWithFault(req, res, action);
    stats.count(platform, res.statusCode);
  };

  const tls = await startTlsServer({
    port: config.port,
    certs,
    connections,
    handler: (req, res, conn) =>
      void serve(req, res, conn).catch((err: unknown) => {
        log.error({ err, path: req.url?.split("?")[0] }, "provider request failed");
        if (!res.headersSent) sendJson(res, 500, { reason: "InternalServerError" });
      }),
  });
  // The endpoints' origin depends on the port the TLS server got (tests use port 0).
  // No request can arrive before this line: connections are handled on a later tick.
  const publicUrl = config.publicUrl ?? `https://127.0.0.1:${tls.port}`;
  const subscriptions = new SubscriptionStore(publicUrl);
  const apns = setUpApns(config, { recorder, connections, log });
  const fcm = setUpFcm(config, { recorder, publicUrl, log });
  providers = [new WebPushService(subscriptions, recorder, publicUrl, log), ...apns.handlers, ...fcm.handlers];

  const admin = await startAdminApi({
    port: config.adminPort,
    routes: [
      ...sharedAdminRoutes({ recorder, faults, stats }),
      ...webPushAdminRoutes(subscriptions),
      ...apns.routes,
      ...fcm.routes,
    ],
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

/**
 * Holds a new HTTP/2 stream to its connection's limit. A stream over it was never
 * processed, so it is reset with REFUSED_STREAM (safe to retry) and the connection gets
 * GOAWAY, as APNs answers; otherwise FCM and Web Push streams lift the one-stream
 * advertisement (only APNs keeps it until a valid provider token, and raises it itself).
 */
function admitStream(conn: Connection, platform: Platform, req: http2.Http2ServerRequest): boolean {
  if (!conn.admit(platform, req.stream.id ?? 0)) {
    req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    conn.goAway("TooManyConcurrentStreams");
    return false;
  }
  if (platform !== "apns") conn.raiseStreamLimit();
  return true;
}

/** An injected drop: no status line, no headers; HTTP/2 resets the stream, HTTP/1.1 cuts the connection. */
function drop(req: ProviderRequest): void {
  if (req instanceof http2.Http2ServerRequest) req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  else req.socket.destroy();
}
