import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import type { FcmResponse } from "./fcm-errors.js";

export interface Http2PoolOptions {
  /** Sessions per origin at most; more open only while the others are full. */
  maxSessionsPerOrigin?: number;
  /** Streams assumed per session until the server's SETTINGS say otherwise. */
  defaultStreamsPerSession?: number;
  timeoutMs?: number;
  idleTimeoutMs?: number;
}

interface PooledSession {
  session: ClientHttp2Session;
  /** Resolves once the server's SETTINGS arrived (its stream limit is known). */
  ready: Promise<void>;
  settled: boolean;
  active: number;
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * POSTs over pooled HTTP/2 sessions, per origin, each filled up to the concurrent
 * stream limit its server advertises before another one is opened. This is what
 * firebase-admin lacks (a session per call). TLS is verified against the system store
 * plus NODE_EXTRA_CA_CERTS, always; an origin that does not speak HTTP/2 fails.
 */
export class Http2Pool {
  private readonly pools = new Map<string, PooledSession[]>();
  private readonly maxSessions: number;
  private readonly defaultStreams: number;
  private readonly timeoutMs: number;
  private readonly idleTimeoutMs: number;
  private closed = false;

  constructor(opts: Http2PoolOptions = {}) {
    this.maxSessions = opts.maxSessionsPerOrigin ?? 16;
    this.defaultStreams = opts.defaultStreamsPerSession ?? 100;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 60_000;
  }

  async post(url: URL, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<FcmResponse> {
    if (this.closed) throw Object.assign(new Error("transport closed"), { code: "ERR_TRANSPORT_CLOSED" });
    const pooled = this.pick(url.origin);
    pooled.active++;
    try {
      await pooled.ready;
      return await this.request(pooled.session, url, headers, body, signal);
    } finally {
      pooled.active--;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.pools.values()].flat();
    this.pools.clear();
    await Promise.all(
      sessions.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.session.closed || p.session.destroyed) return resolve();
            p.session.close(() => resolve());
            // In-flight streams were aborted by the caller's shutdown; do not wait on a stuck peer.
            setTimeout(() => p.session.destroy(), 2_000).unref();
          }),
      ),
    );
  }

  private limit(p: PooledSession): number {
    return p.settled ? (p.session.remoteSettings.maxConcurrentStreams ?? this.defaultStreams) : this.defaultStreams;
  }

  /** Synchronous, so that concurrent callers see each other's reservations. */
  private pick(origin: string): PooledSession {
    let pool = this.pools.get(origin);
    if (!pool) this.pools.set(origin, (pool = []));
    let best: PooledSession | undefined;
    for (const p of pool) {
      if (p.active < this.limit(p) && (!best || p.active < best.active)) best = p;
    }
    if (best) return best;
    if (pool.length < this.maxSessions) return this.connect(origin, pool);
    // Every session is full: queue on the least loaded one (nghttp2 holds the stream until a slot frees).
    return pool.reduce((a, b) => (b.active < a.active ? b : a));
  }

  private connect(origin: string, pool: PooledSession[]): PooledSession {
    const session = http2.connect(origin, { settings: { enablePush: false } });
    const pooled: PooledSession = { session, ready: Promise.resolve(), settled: false, active: 0 };
    const drop = () => {
      const i = pool.indexOf(pooled);
      if (i >= 0) pool.splice(i, 1);
    };
    pooled.ready = new Promise<void>((resolve, reject) => {
      session.once("remoteSettings", () => {
        pooled.settled = true;
        resolve();
      });
      session.once("close", () =>
        reject(Object.assign(new Error("session closed before it was ready"), { code: "ERR_SESSION_CLOSED" })),
      );
      session.once("error", reject);
    });
    // Callers that wait on `ready` see the rejection; this keeps it from being "unhandled" when none do.
    pooled.ready.catch(() => undefined);
    session.on("error", drop);
    session.on("goaway", drop);
    session.on("close", drop);
    session.setTimeout(this.idleTimeoutMs, () => {
      if (pooled.active === 0) session.close();
    });
    pool.push(pooled);
    return pooled;
  }

  private request(
    session: ClientHttp2Session,
    url: URL,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<FcmResponse> {
    return new Promise<FcmResponse>((resolve, reject) => {
      const payload = Buffer.from(body);
      const stream = session.request(
        { ":method": "POST", ":path": url.pathname + url.search, ...headers, "content-length": String(payload.length) },
        { signal },
      );
      stream.setTimeout(this.timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      let status = 0;
      let responseHeaders: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        responseHeaders = h;
      });
      stream.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= MAX_BODY_BYTES) chunks.push(c);
      });
      stream.on("end", () => {
        if (status)
          resolve({ status, headers: flatten(responseHeaders), body: Buffer.concat(chunks).toString("utf8") });
        else reject(Object.assign(new Error("stream ended without a response"), { code: "ERR_NO_RESPONSE" }));
      });
      stream.on("error", reject);
      // After 'end' or 'error' this is a no-op; otherwise the peer reset the stream.
      stream.on("close", () => {
        if (status)
          resolve({ status, headers: flatten(responseHeaders), body: Buffer.concat(chunks).toString("utf8") });
        else reject(Object.assign(new Error("stream closed"), { code: `ERR_STREAM_${stream.rstCode ?? "CLOSED"}` }));
      });
      stream.end(payload);
    });
  }
}

function flatten(h: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(h)) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}
