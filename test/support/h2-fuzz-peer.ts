import http2, { type Http2Session, type ServerHttp2Stream } from "node:http2";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { ensureCertificates } from "@herald/provider-sim/ca";
import { DEFAULT_CERT_DIR } from "@herald/provider-sim/config";

/**
 * A provider stand-in that answers as no real provider should, for the senders' fuzz
 * suites: random statuses, garbage, truncated and huge bodies, odd or missing headers,
 * stream resets, GOAWAYs, dropped connections, silence. It speaks TLS with ALPN h2, and
 * HTTP/1.1 on a second port for OAuth token requests (a separate server: answering
 * HTTP/1.1 on the HTTP/2 one would switch on Node's compatibility layer, which then acts
 * on the streams too), with the simulator's certificate, whose CA the test workers trust
 * (test/support/global-setup.ts), as every sender trusts a provider's.
 * What it does is a script that fast-check generates (h2-fuzz-scripts.ts): each stream
 * (each HTTP/1.1 request) takes the next action, in the order the requests arrive, so
 * concurrent sends may meet them in another order from one run to the next.
 */

export type BodySpec =
  | { kind: "text"; text: string }
  /** Bytes that are not UTF-8, as base64. */
  | { kind: "bytes"; base64: string }
  /** That many bytes of one character: past what any sender keeps of an answer. */
  | { kind: "huge"; bytes: number };

export type StreamAction =
  | {
      kind: "answer";
      status: number;
      headers: Record<string, string | string[]>;
      body: BodySpec;
      /** whole; in pieces; cut by RST_STREAM after the headers or after part of the body; with trailers. */
      framing: "whole" | "pieces" | "reset-after-headers" | "reset-mid-body" | "trailers";
      delayMs: number;
    }
  /** RST_STREAM before any answer. */
  | { kind: "reset"; code: number }
  /** GOAWAY naming this stream (processed), the one before it (not processed) or none, then maybe an answer. */
  | { kind: "goaway"; code: number; last: "this" | "before" | "zero"; after: "answer" | "close" | "nothing" }
  /** The TCP connection dropped. */
  | { kind: "drop" }
  /** No answer at all: the sender's request timeout has to end it. */
  | { kind: "silence" };

/** An answer of the HTTP/1.1 server (a token endpoint's, or a push service's without HTTP/2). */
export interface TokenAction {
  status: number;
  body: BodySpec;
  /** The connection dropped instead of an answer. */
  drop: boolean;
}

export interface PeerScript {
  /** SETTINGS_MAX_CONCURRENT_STREAMS of every connection. */
  maxConcurrentStreams: number;
  streams: StreamAction[];
  tokens: TokenAction[];
}

export interface FuzzPeer {
  origin: string;
  /** The HTTP/1.1-only server: OAuth token requests, or a push service without HTTP/2. */
  h1Origin: string;
  /** The OAuth token endpoint on it. */
  tokenUrl: string;
  /** Actions from now on; streams beyond the script get a plain 200. */
  play(script: PeerScript): void;
  /** Streams and token requests seen, answers sent. */
  readonly seen: { streams: number; tokens: number; answers: number };
  close(): Promise<void>;
}

const OK: StreamAction = {
  kind: "answer",
  status: 200,
  headers: {},
  body: { kind: "text", text: "" },
  framing: "whole",
  delayMs: 0,
};
/** Node's HTTP/2 server corrupted its heap when faults ran inside stream handlers (http2-pool.int.test.ts): a tick later. */
const later = (fn: () => void) => setImmediate(fn);

function bodyBytes(body: BodySpec): Buffer {
  if (body.kind === "text") return Buffer.from(body.text);
  if (body.kind === "bytes") return Buffer.from(body.base64, "base64");
  return Buffer.alloc(body.bytes, "x");
}

/** Starts the peer on a free loopback port. */
export async function startFuzzPeer(): Promise<FuzzPeer> {
  const certs = await ensureCertificates(DEFAULT_CERT_DIR);
  const server = http2.createSecureServer({ key: certs.serverKey, cert: certs.serverCert });
  const tokenServer = https.createServer({ key: certs.serverKey, cert: certs.serverCert });
  let script: PeerScript = { maxConcurrentStreams: 100, streams: [], tokens: [] };
  let next = 0;
  let nextToken = 0;
  const seen = { streams: 0, tokens: 0, answers: 0 };
  const sessions = new Set<Http2Session>();
  const sockets = new Set<Socket>();

  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    session.on("error", () => undefined); // its faults are on purpose
    session.settings({ maxConcurrentStreams: script.maxConcurrentStreams });
  });
  server.on("stream", (stream: ServerHttp2Stream) => {
    seen.streams++;
    stream.on("error", () => undefined);
    const action = script.streams[next++] ?? OK;
    stream.resume();
    stream.once("end", () => later(() => act(stream, action)));
  });
  tokenServer.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  tokenServer.on("request", (req, res) => {
    seen.tokens++;
    const action = script.tokens[nextToken++] ?? {
      status: 200,
      body: { kind: "text", text: '{"access_token":"t","expires_in":3600}' },
      drop: false,
    };
    req.resume();
    req.once("end", () => {
      if (action.drop) return void req.socket.destroy();
      try {
        res.writeHead(action.status, { "content-type": "application/json" });
        res.end(bodyBytes(action.body));
        seen.answers++;
      } catch {
        req.socket.destroy();
      }
    });
  });

  function act(stream: ServerHttp2Stream, action: StreamAction): void {
    const session = stream.session;
    if (stream.destroyed || !session || session.destroyed) return;
    try {
      switch (action.kind) {
        case "answer":
          return void setTimeout(() => answer(stream, action), action.delayMs);
        case "reset":
          return void stream.close(action.code);
        case "goaway": {
          const id = stream.id ?? 0;
          session.goaway(action.code, action.last === "this" ? id : action.last === "before" ? Math.max(0, id - 2) : 0);
          if (action.after === "answer") answer(stream, OK as Extract<StreamAction, { kind: "answer" }>);
          else if (action.after === "close") later(() => session.destroy());
          return;
        }
        case "drop":
          return void session.socket.destroy();
        case "silence":
          return;
      }
    } catch {
      // A session that went away under us: the sender sees a cut connection, as it should.
    }
  }

  function answer(stream: ServerHttp2Stream, a: Extract<StreamAction, { kind: "answer" }>): void {
    if (stream.destroyed || stream.closed) return;
    const body = bodyBytes(a.body);
    try {
      stream.respond({ ":status": a.status, ...a.headers }, { waitForTrailers: a.framing === "trailers" });
      seen.answers++;
      if (a.framing === "trailers") stream.once("wantTrailers", () => stream.sendTrailers({ "x-trailer": "1" }));
      switch (a.framing) {
        case "reset-after-headers":
          return void later(() => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
        case "reset-mid-body":
          stream.write(body.subarray(0, Math.floor(body.length / 2)));
          return void later(() => stream.close(http2.constants.NGHTTP2_CANCEL));
        case "pieces": {
          const half = Math.floor(body.length / 2);
          stream.write(body.subarray(0, half));
          return void setTimeout(() => !stream.destroyed && stream.end(body.subarray(half)), 1);
        }
        default:
          stream.end(body);
      }
    } catch {
      stream.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => tokenServer.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    h1Origin: `https://127.0.0.1:${(tokenServer.address() as AddressInfo).port}`,
    tokenUrl: `https://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`,
    play(s) {
      script = s;
      next = 0;
      nextToken = 0;
    },
    seen,
    async close() {
      for (const s of sessions) s.destroy();
      for (const s of sockets) s.destroy();
      await Promise.all([server, tokenServer].map((srv) => new Promise((resolve) => srv.close(resolve))));
    },
  };
}
