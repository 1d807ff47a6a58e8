import http2 from "node:http2";
import { isIP } from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";

/**
 * A bare node:http2 client for the provider tests, independent of Herald's senders:
 * every request's outcome is either an answer or the stream/session error code.
 */
export interface H2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}
export type H2Outcome = H2Answer | { error: string; rstCode?: number };

export interface H2Session {
  session: http2.ClientHttp2Session;
  /** Every SETTINGS_MAX_CONCURRENT_STREAMS the server advertised, in order. */
  advertised: number[];
  /** Each GOAWAY received: its error code and debug data as text. */
  goaways: { code: number; data: string }[];
  request(headers: http2.OutgoingHttpHeaders, body?: string | Buffer): Promise<H2Outcome>;
  /** The client's TCP port: how the simulator's connection list names this connection (`<address>:<port>`). */
  localPort(): number | undefined;
  close(): void;
}

/**
 * `eagerMs`: hold the server's bytes back that long, so requests made at once leave
 * before the client has read the server's SETTINGS, as an eager client's would on a
 * real network (on loopback Node has read them by the time it sends).
 */
export function connectH2(origin: string, ca: string, opts: { eagerMs?: number } = {}): H2Session {
  let tlsSocket: tls.TLSSocket | undefined;
  const session = http2.connect(
    origin,
    opts.eagerMs
      ? { ca, createConnection: () => delayedReads((tlsSocket = tlsConnect(origin, ca)), opts.eagerMs!) }
      : { ca },
  );
  const advertised: number[] = [];
  const goaways: { code: number; data: string }[] = [];
  session.on("remoteSettings", (s) => {
    if (s.maxConcurrentStreams !== undefined) advertised.push(s.maxConcurrentStreams);
  });
  session.on("goaway", (code, _last, data) => goaways.push({ code, data: data?.toString("utf8") ?? "" }));
  // Errors surface on the streams; the session's own error event must not crash the test run.
  session.on("error", () => undefined);
  const request = (headers: http2.OutgoingHttpHeaders, body?: string | Buffer) =>
    new Promise<H2Outcome>((resolve) => {
      let req: http2.ClientHttp2Stream;
      try {
        req = session.request({ ":method": "POST", ...headers });
      } catch (err) {
        resolve({ error: (err as NodeJS.ErrnoException).code ?? String(err) });
        return;
      }
      const chunks: Buffer[] = [];
      let responseHeaders: http2.IncomingHttpHeaders | undefined;
      req.on("response", (h) => (responseHeaders = h));
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("close", () => {
        if (responseHeaders) {
          resolve({
            status: Number(responseHeaders[":status"]),
            headers: responseHeaders,
            body: Buffer.concat(chunks).toString("utf8"),
          });
        } else {
          resolve({ error: "closed without a response", rstCode: req.rstCode });
        }
      });
      req.on("error", () => undefined);
      // Node ends GET and HEAD streams with their headers: they carry no body.
      if (req.writable) req.end(body);
    });
  // Captured once connected: a closed socket no longer knows its port.
  let port: number | undefined;
  const capture = (socket: tls.TLSSocket | undefined) => (port ??= socket?.localPort);
  session.once("connect", () => capture(tlsSocket ?? (session.socket as tls.TLSSocket)));
  tlsSocket?.once("secureConnect", () => capture(tlsSocket));
  const localPort = () => port;
  return { session, advertised, goaways, request, localPort, close: () => session.close() };
}

function tlsConnect(origin: string, ca: string): tls.TLSSocket {
  const { hostname, port } = new URL(origin);
  return tls.connect({
    host: hostname,
    port: Number(port),
    ca,
    ALPNProtocols: ["h2"],
    servername: isIP(hostname) ? undefined : hostname,
  });
}

/** The socket as the client sees it through a slow link: everything the server sends arrives `ms` late. */
function delayedReads(socket: tls.TLSSocket, ms: number): Duplex {
  let held: Buffer[] | null = [];
  let remoteEnded = false;
  const duplex = new Duplex({
    read: () => undefined,
    // Once the server has closed, what the client still writes is lost on the wire, as it would be.
    write: (chunk: Buffer, _encoding, callback) =>
      remoteEnded || socket.destroyed ? callback() : socket.write(chunk, () => callback()),
    final: (callback) => (socket.writableEnded ? callback() : socket.end(() => callback())),
    destroy: (err, callback) => {
      socket.destroy();
      callback(err);
    },
  });
  const deliver = (chunk: Buffer | null) => (held ? held.push(chunk as Buffer) : duplex.push(chunk));
  socket.on("data", deliver);
  socket.on("end", () => {
    remoteEnded = true;
    deliver(null as unknown as Buffer);
  });
  socket.on("error", (err) => {
    if (!remoteEnded) duplex.destroy(err);
  });
  setTimeout(() => {
    for (const chunk of held ?? []) duplex.push(chunk);
    held = null;
  }, ms);
  return duplex;
}

/** The outcome as `<status> <reason>` (APNs bodies), `<status>` for an empty body, or `reset <code>`. */
export function apnsOutcome(o: H2Outcome): string {
  if ("error" in o) return `reset ${o.rstCode ?? o.error}`;
  if (!o.body) return String(o.status);
  return `${o.status} ${(JSON.parse(o.body) as { reason: string }).reason}`;
}

/** Resolves once `session` has seen a GOAWAY, or after `ms`. */
export function waitForGoaway(s: H2Session, ms = 2_000): Promise<void> {
  if (s.goaways.length > 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    s.session.once("goaway", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
