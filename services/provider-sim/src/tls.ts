import http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import type { SimCertificates } from "./ca.js";
import type { ProviderRequest, ProviderResponse } from "./platform.js";

/**
 * The provider port: TLS 1.2+, HTTP/2 (APNs and FCM require it; a Herald sender pools
 * HTTP/2 sessions) with HTTP/1.1 allowed for clients such as the `web-push` library.
 */
export interface TlsServer {
  port: number;
  close(): Promise<void>;
}

/** How long close() lets in-flight requests finish before cutting connections. */
const CLOSE_GRACE_MS = 5_000;

export async function startTlsServer(opts: {
  port: number;
  certs: SimCertificates;
  handler: (req: ProviderRequest, res: ProviderResponse) => void;
}): Promise<TlsServer> {
  const server = http2.createSecureServer({
    key: opts.certs.serverKey,
    cert: opts.certs.serverCert,
    allowHTTP1: true,
    minVersion: "TLSv1.2",
  });
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let inFlight = 0;
  server.on("secureConnection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  server.on("request", (req: ProviderRequest, res: ProviderResponse) => {
    inFlight += 1;
    let done = false;
    const finished = () => {
      if (!done) inFlight -= 1;
      done = true;
    };
    res.once("finish", finished);
    res.once("close", finished);
    opts.handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, () => resolve());
  });

  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // GOAWAY to HTTP/2 clients: in-flight streams finish, no new ones start.
      for (const session of sessions) session.close();
      const deadline = Date.now() + CLOSE_GRACE_MS;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // Idle HTTP/1.1 keep-alive connections (and anything past the grace period) would hold close() forever.
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
