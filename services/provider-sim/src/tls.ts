import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import type { SimCertificates } from "./ca.js";
import { NGHTTP2_STREAM_LIMIT, type Connection, type ConnectionRegistry } from "./connections.js";
import { FrameTap } from "./frame-tap.js";
import type { ProviderRequest, ProviderResponse } from "./platform.js";

/**
 * The provider port: TLS 1.2+, HTTP/2 (APNs and FCM require it; a Herald sender pools
 * HTTP/2 sessions) with HTTP/1.1 allowed for clients such as the `web-push` library.
 * ALPN picks the protocol per connection; HTTP/2 connections pass through a frame tap
 * so the simulator, not nghttp2, advertises and enforces stream limits.
 */
export interface TlsServer {
  port: number;
  close(): Promise<void>;
}

/** HTTP/2 requests carry their connection (stream limits, APNs token state); HTTP/1.1 ones have none. */
export type RequestHandler = (req: ProviderRequest, res: ProviderResponse, conn: Connection | undefined) => void;

/** How long close() lets in-flight requests finish before cutting connections. */
const CLOSE_GRACE_MS = 5_000;
/** Room for bursts of hundreds of streams per connection; Node's 10 MB default refuses streams before JavaScript sees them. */
const MAX_SESSION_MEMORY_MB = 256;

export async function startTlsServer(opts: {
  port: number;
  certs: SimCertificates;
  connections: ConnectionRegistry;
  handler: RequestHandler;
}): Promise<TlsServer> {
  const server = tls.createServer({
    key: opts.certs.serverKey,
    cert: opts.certs.serverCert,
    minVersion: "TLSv1.2",
    ALPNProtocols: ["h2", "http/1.1"],
  });
  const sockets = new Set<tls.TLSSocket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let inFlight = 0;
  const track = (res: ProviderResponse) => {
    inFlight += 1;
    let done = false;
    const finished = () => {
      if (!done) inFlight -= 1;
      done = true;
    };
    res.once("finish", finished);
    res.once("close", finished);
  };

  const h1 = http.createServer((req, res) => {
    track(res);
    opts.handler(req, res, undefined);
  });
  const h2 = http2.createServer({
    settings: { maxConcurrentStreams: NGHTTP2_STREAM_LIMIT },
    maxSessionMemory: MAX_SESSION_MEMORY_MB,
  });
  const connectionOf = new WeakMap<http2.Http2Session, Connection>();
  h2.on("request", (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    const conn = req.stream.session ? connectionOf.get(req.stream.session) : undefined;
    track(res);
    conn?.streamOpened();
    const streamId = req.stream.id ?? 0;
    req.stream.once("close", () => conn?.streamClosed(streamId));
    opts.handler(req, res, conn);
  });

  /** The connection whose session Node is creating right now (see below). */
  let opening: Connection | undefined;
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    // Node's HTTP/2 server disables Nagle on its socket, but here it gets the frame tap,
    // not the socket: without this every response waits ~40 ms for the delayed ACK.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    if (socket.alpnProtocol !== "h2") {
      h1.emit("connection", socket);
      return;
    }
    const conn = opts.connections.open(`${socket.remoteAddress}:${socket.remotePort}`);
    // Node creates the session, and emits "session", synchronously within this emit; its
    // socket is Node's own wrapper of the tap, so the connection is handed over here.
    opening = conn;
    h2.emit("connection", new FrameTap(socket, conn));
    opening = undefined;
  });
  h2.on("session", (session: http2.ServerHttp2Session) => {
    const conn = opening;
    if (!conn) {
      session.destroy(new Error("HTTP/2 session without its connection"));
      return;
    }
    conn.attach(session);
    connectionOf.set(session, conn);
    sessions.add(session);
    session.once("close", () => {
      sessions.delete(session);
      opts.connections.close(conn);
    });
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
