import http2, { type ClientHttp2Session, type ClientHttp2Stream } from "node:http2";
import net from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import type { Logger } from "@herald/runtime";

/** How long a drained connection's socket may wait for the peer to close it. */
const SOCKET_LINGER_MS = 1_000;

export const codeError = (message: string, code: string) => Object.assign(new Error(message), { code });

export interface ConnectionOptions {
  /** Also the handshake deadline: a peer that never completes it fails like a silent stream. */
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  log?: Logger;
  /** It may take streams now, or more of them (connected, peer SETTINGS changed, a stream ended). */
  onCapacity(): void;
  /** It will take no new streams (GOAWAY, error, retired). */
  onDraining(): void;
  onClose(): void;
}

/**
 * One HTTP/2 connection to APNs and what the pool needs to know about it: its state,
 * the streams it carries, whether APNs accepted its token yet (only then does it get
 * more than one stream) and, after a GOAWAY, the last stream APNs processed.
 */
export class Connection {
  readonly session: ClientHttp2Session;
  /** The socket itself: the session only hands out a proxy that cannot destroy it. */
  private readonly socket: Duplex;
  state: "connecting" | "open" | "draining" = "connecting";
  active = 0;
  trusted = false;
  /** Whether it ever answered a request (a connection that never did counts as a failure). */
  answered = false;
  /** From the peer's GOAWAY: streams above it were never processed. */
  lastStreamId?: number;
  error?: Error;
  private released = false;

  constructor(
    readonly origin: string,
    private readonly opts: ConnectionOptions,
  ) {
    this.socket = connectSocket(new URL(origin));
    const session = http2.connect(origin, { settings: { enablePush: false }, createConnection: () => this.socket });
    this.session = session;
    const connectTimer = setTimeout(() => {
      if (this.state === "connecting") session.destroy(codeError(`no connection to ${origin} in time`, "ETIMEDOUT"));
    }, opts.requestTimeoutMs);
    session.on("error", (err) => {
      this.error = err;
      this.drain();
    });
    session.once("connect", () => {
      clearTimeout(connectTimer);
      if (this.state === "connecting") this.state = "open";
      opts.onCapacity();
    });
    // Apple raises MAX_CONCURRENT_STREAMS once it has seen a valid token.
    session.on("remoteSettings", () => opts.onCapacity());
    session.on("goaway", (code: number, lastStreamId: number, opaque?: Buffer) => {
      this.lastStreamId = lastStreamId;
      opts.log?.info({ origin, code, lastStreamId, reason: goawayReason(opaque) }, "APNs connection going away");
      this.drain();
    });
    session.once("close", () => {
      clearTimeout(connectTimer);
      opts.onClose();
    });
    session.setTimeout(opts.idleTimeoutMs, () => {
      if (this.active === 0) this.drain();
    });
  }

  /** Whether it can take one more stream now. */
  hasRoom(): boolean {
    if (this.state !== "open" || this.session.closed || this.session.destroyed) return false;
    const peer = this.session.remoteSettings.maxConcurrentStreams ?? 1;
    return this.active < (this.trusted ? peer : Math.min(1, peer));
  }

  streamEnded(): void {
    this.active--;
    if (this.state === "draining") this.releaseWhenIdle();
  }

  /**
   * The peer refused the stream, never saw it (no id yet), or said in its GOAWAY that it
   * stopped before it: sending it again cannot deliver it twice.
   */
  neverProcessed(stream: ClientHttp2Stream): boolean {
    if (stream.id === undefined) return true;
    if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return true;
    return this.lastStreamId !== undefined && stream.id > this.lastStreamId;
  }

  /** No new streams: it sends GOAWAY and lets its streams finish. */
  drain(): void {
    if (this.state === "draining") return;
    this.state = "draining";
    if (!this.session.closed && !this.session.destroyed) this.session.close();
    this.releaseWhenIdle();
    this.opts.onDraining();
  }

  /** Resolves once the socket is closed. */
  closed(): Promise<void> {
    return new Promise((resolve) => (this.socket.destroyed ? resolve() : this.socket.once("close", () => resolve())));
  }

  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Once a draining connection carries no stream, its socket goes shortly after (time
   * for the GOAWAY to leave): a peer that keeps its side open after a GOAWAY would
   * otherwise hold the socket forever.
   */
  private releaseWhenIdle(): void {
    if (this.active > 0 || this.released) return;
    this.released = true;
    setTimeout(() => this.socket.destroy(), SOCKET_LINGER_MS).unref();
  }
}

/** TLS with ALPN h2, verified against the system store plus NODE_EXTRA_CA_CERTS, always. */
function connectSocket(origin: URL): Duplex {
  const host = origin.hostname.replace(/^\[(.*)\]$/, "$1");
  return tls.connect({
    host,
    port: Number(origin.port) || 443,
    ALPNProtocols: ["h2"],
    ...(net.isIP(host) ? {} : { servername: host }),
  });
}

/** APNs puts a JSON `{"reason": …}` into a GOAWAY's debug data. */
function goawayReason(opaque: Buffer | undefined): string | undefined {
  if (!opaque || opaque.length === 0) return undefined;
  try {
    const parsed = JSON.parse(opaque.toString("utf8")) as { reason?: unknown };
    return typeof parsed.reason === "string" ? parsed.reason : undefined;
  } catch {
    return opaque.toString("utf8").slice(0, 200);
  }
}
