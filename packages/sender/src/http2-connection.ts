import http2, { type ClientHttp2Session, type ClientHttp2Stream } from "node:http2";
import net, { type LookupFunction } from "node:net";
import tls from "node:tls";
import type { Logger } from "@herald/runtime";

/** An error of the shared HTTP/2 pool; `code` becomes the retry reason (`NetworkError:<code>`). */
export class Http2PoolError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "Http2PoolError";
  }
}

/** The origin does not offer HTTP/2 by ALPN: every request to it fails at once with this code. */
export const ERR_NO_H2 = "ERR_NO_H2";

/** Whether an error says the origin does not speak HTTP/2 (our ALPN check, or the server's TLS alert). */
export function isNoH2(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code === ERR_NO_H2 || code.includes("NO_APPLICATION_PROTOCOL"));
}

/** How long a drained connection's socket may wait for the peer to close it. */
export const SOCKET_LINGER_MS = 1_000;

export interface ConnectionOptions {
  /** Names the peer in logs ("APNs", "FCM", "Web Push"). */
  label: string;
  /** Most streams at once whatever the peer allows. */
  maxStreams: number;
  /** Takes one stream until an answer shows the peer accepted our credentials (markTrusted). */
  trustedFromStart: boolean;
  lookup?: LookupFunction;
  /** Errors after which no other connection is tried for the requests waiting (besides no HTTP/2). */
  fatalConnectError?(err: Error): boolean;
  log?: Logger;
  /** It may take streams now, or more of them (SETTINGS arrived or changed). */
  onCapacity(conn: Connection): void;
  /** It will take no new streams (GOAWAY, error, retired, idle). */
  onDraining(conn: Connection): void;
  onClose(conn: Connection): void;
}

/** What the pool's sweep needs to judge a connection. */
export interface Timing {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  pingIntervalMs: number;
  pingTimeoutMs: number;
}

/**
 * One HTTP/2 connection and what the pool needs to know about it: its state, the streams
 * it carries and may carry (the peer's SETTINGS, one until trusted), after a GOAWAY the
 * last stream the peer processed, and the times its single sweep (the pool's timer, no
 * per-connection timer) judges: connect deadline, idleness, an unanswered PING.
 */
export class Connection {
  readonly session: ClientHttp2Session;
  /** The socket itself: the session only hands out a proxy that cannot destroy it. */
  private readonly socket: tls.TLSSocket;
  state: "connecting" | "open" | "draining" = "connecting";
  active = 0;
  trusted: boolean;
  /** Whether it ever answered a request (one that never did counts as a failure). */
  answered = false;
  /** From the peer's GOAWAY: streams above it were never processed. */
  lastStreamId?: number;
  error?: Error;
  /** The origin cannot be served over HTTP/2 at all: queued requests fail at once. */
  fatal = false;
  /** Answers so far; the sweep notices a change instead of each answer reading the clock. */
  answers = 0;
  private peerLimit = 1;
  private answersSeen = 0;
  private readonly startedAt: number;
  /** Last answer (idleness) and last answer or PING ack (keep-alive), as of the sweep. */
  private lastAnswerAt: number;
  private lastHeardAt: number;
  private pingSentAt = 0;
  private releaseAt = 0;

  constructor(
    readonly origin: string,
    private readonly opts: ConnectionOptions,
    now: number,
  ) {
    this.trusted = opts.trustedFromStart;
    this.startedAt = now;
    this.lastAnswerAt = now;
    this.lastHeardAt = now;
    this.socket = connectSocket(new URL(origin), opts.lookup);
    const session = http2.connect(origin, { settings: { enablePush: false }, createConnection: () => this.socket });
    this.session = session;
    this.socket.once("secureConnect", () => {
      this.socket.setNoDelay(true);
      if (this.socket.alpnProtocol !== "h2")
        this.fail(new Http2PoolError(`${new URL(origin).host} does not offer HTTP/2`, ERR_NO_H2));
    });
    session.on("error", (err) => {
      this.noteError(err);
      this.drain();
    });
    // The peer's SETTINGS (the first frame it must send) make the connection usable: only
    // then is its stream limit known. APNs raises its limit once it has seen a valid token.
    session.on("remoteSettings", (settings) => {
      this.peerLimit = Math.max(0, Math.min(settings.maxConcurrentStreams ?? opts.maxStreams, opts.maxStreams));
      if (this.state === "connecting") this.state = "open";
      opts.onCapacity(this);
    });
    session.on("goaway", (code: number, lastStreamId: number, opaque?: Buffer) => {
      this.lastStreamId = lastStreamId;
      opts.log?.info(
        { origin, code, lastStreamId, reason: goawayReason(opaque) },
        `${opts.label} connection going away`,
      );
      this.drain();
    });
    session.once("close", () => opts.onClose(this));
  }

  get host(): string {
    return new URL(this.origin).host;
  }

  /** Whether it can take one more stream now. */
  hasRoom(): boolean {
    return this.active < this.streamLimit();
  }

  /**
   * Streams it may carry at once now: the peer's latest SETTINGS (capped by maxStreams),
   * one until trusted, none unless open. A lowered limit holds from the moment it arrives.
   */
  streamLimit(): number {
    if (this.state !== "open") return 0;
    return this.trusted ? this.peerLimit : Math.min(1, this.peerLimit);
  }

  /** The peer accepted our credentials: as many streams as its SETTINGS allow from now on. */
  markTrusted(): void {
    this.trusted = true;
  }

  streamEnded(): void {
    this.active--;
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
    const was = this.state;
    this.state = "draining";
    if (!this.session.closed && !this.session.destroyed) this.session.close();
    this.drained(was);
  }

  /** Takes the connection out of service at a caller's request (e.g. APNs TooManyProviderTokenUpdates). */
  retire(reason: string): void {
    if (this.state === "draining") return;
    this.opts.log?.info({ origin: this.origin, reason }, `retiring ${this.opts.label} connection`);
    this.drain();
  }

  /** Ends it now: its streams fail (those the peer never saw are re-sent elsewhere). */
  fail(err: Error): void {
    this.noteError(err);
    const was = this.state;
    this.state = "draining";
    this.session.destroy(err);
    this.socket.destroy();
    if (was !== "draining") this.drained(was);
  }

  private noteError(err: Error): void {
    this.error ??= err;
    if (this.state === "connecting" && (isNoH2(err) || this.opts.fatalConnectError?.(err))) this.fatal = true;
  }

  /**
   * A connection that never opened carried nothing: the pool hears of it when it closes
   * (and counts the failure) rather than now, so it does not open a replacement first.
   */
  private drained(was: "connecting" | "open"): void {
    if (was === "open") this.opts.onDraining(this);
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Resolves once the socket is closed. */
  closed(): Promise<void> {
    return new Promise((resolve) => (this.socket.destroyed ? resolve() : this.socket.once("close", () => resolve())));
  }

  /** Called by the pool's sweep: connect deadline, PING keep-alive, idleness, lingering sockets. */
  sweep(now: number, t: Timing): void {
    if (this.answers !== this.answersSeen) {
      this.answersSeen = this.answers;
      this.lastAnswerAt = now;
      this.lastHeardAt = now;
    }
    if (this.state === "connecting") {
      if (now - this.startedAt >= t.connectTimeoutMs)
        this.fail(
          new Http2PoolError(`no HTTP/2 connection to ${this.host} within ${t.connectTimeoutMs} ms`, "ETIMEDOUT"),
        );
      return;
    }
    if (this.pingSentAt > 0 && now - this.pingSentAt >= t.pingTimeoutMs) {
      this.opts.log?.warn({ origin: this.origin }, `${this.opts.label} connection did not answer a PING; closing it`);
      this.fail(new Http2PoolError(`${this.host} did not answer a PING in time`, "ERR_HTTP2_PING_TIMEOUT"));
      return;
    }
    if (this.state === "draining") {
      // A peer that keeps its side open after our GOAWAY would otherwise hold the socket forever.
      if (this.active > 0) return;
      if (this.releaseAt === 0) this.releaseAt = now + SOCKET_LINGER_MS;
      else if (now >= this.releaseAt) this.socket.destroy();
      return;
    }
    if (this.active === 0 && now - this.lastAnswerAt >= t.idleTimeoutMs) {
      this.drain();
      return;
    }
    if (t.pingIntervalMs > 0 && this.pingSentAt === 0 && now - this.lastHeardAt >= t.pingIntervalMs) this.ping(now);
  }

  private ping(now: number): void {
    if (this.session.closed || this.session.destroyed) return;
    this.pingSentAt = now;
    // An error (session gone) leaves pingSentAt set: the next sweeps close the connection.
    const sent = this.session.ping((err) => {
      if (err) return;
      this.pingSentAt = 0;
      this.lastHeardAt = Date.now();
    });
    if (!sent) this.pingSentAt = 0;
  }
}

/** TLS with ALPN h2, verified against the system store plus NODE_EXTRA_CA_CERTS, always. */
function connectSocket(origin: URL, lookup: LookupFunction | undefined): tls.TLSSocket {
  const host = origin.hostname.replace(/^\[(.*)\]$/, "$1");
  return tls.connect({
    host,
    port: Number(origin.port) || 443,
    ALPNProtocols: ["h2"],
    ...(net.isIP(host) ? {} : { servername: host }),
    ...(lookup ? { lookup } : {}),
  });
}

/** APNs puts a JSON `{"reason": …}` into a GOAWAY's debug data. */
function goawayReason(opaque: Buffer | undefined): string | undefined {
  if (!opaque || opaque.length === 0) return undefined;
  try {
    const parsed = JSON.parse(opaque.toString("utf8")) as { reason?: unknown };
    return typeof parsed.reason === "string" ? parsed.reason.slice(0, 64) : undefined;
  } catch {
    return opaque.toString("utf8").slice(0, 64);
  }
}
