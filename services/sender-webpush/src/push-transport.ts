import dns from "node:dns";
import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { classifyAddress } from "@herald/runtime";

export interface PushResponse {
  status: number;
  headers: Record<string, string | undefined>;
}

export interface PushTransportOptions {
  /** HTTP/2 sessions per origin at most; more open only when the others are full. */
  maxSessionsPerOrigin?: number;
  /** HTTP/1.1 sockets per origin, for push services without HTTP/2. */
  maxSocketsPerOrigin?: number;
  timeoutMs?: number;
  /** Allow loopback/private addresses (dev mode, tests). */
  allowPrivate?: boolean;
}

/**
 * DNS lookup that refuses non-public addresses at connect time, so an endpoint whose
 * name was public at registration cannot be re-pointed into the cluster (rebinding).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as dns.LookupAddress[];
      const refused = allowPrivate ? undefined : list.find((a) => classifyAddress(a.address) !== "public");
      if (refused) {
        const e = Object.assign(new Error(`${hostname} resolves to a ${classifyAddress(refused.address)} address`), {
          code: "ESSRF",
        });
        return callback(e, "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

interface PooledSession {
  session: ClientHttp2Session;
  active: number;
}

/**
 * POSTs to push services over pooled connections: HTTP/2 sessions per origin, each
 * filled up to the stream limit the server advertises; an origin that does not offer
 * HTTP/2 (ALPN) is remembered and served over keep-alive HTTP/1.1 instead. TLS is
 * verified against the system store plus NODE_EXTRA_CA_CERTS, always.
 */
export class PushTransport {
  private readonly h2 = new Map<string, PooledSession[]>();
  private readonly h1Origins = new Set<string>();
  private readonly agent: https.Agent;
  private readonly maxSessions: number;
  private readonly timeoutMs: number;
  private readonly lookup: LookupFunction;

  constructor(opts: PushTransportOptions = {}) {
    this.maxSessions = opts.maxSessionsPerOrigin ?? 4;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.lookup = guardedLookup(opts.allowPrivate ?? false);
    this.agent = new https.Agent({ keepAlive: true, maxSockets: opts.maxSocketsPerOrigin ?? 64, lookup: this.lookup });
  }

  async post(url: URL, headers: Record<string, string>, body: Buffer, signal?: AbortSignal): Promise<PushResponse> {
    if (this.h1Origins.has(url.origin)) return this.postH1(url, headers, body, signal);
    try {
      return await this.postH2(url, headers, body, signal);
    } catch (err) {
      if (!isNoH2(err)) throw err;
      this.h1Origins.add(url.origin);
      return this.postH1(url, headers, body, signal);
    }
  }

  async close(): Promise<void> {
    for (const pool of this.h2.values()) for (const p of pool) p.session.close();
    this.h2.clear();
    this.agent.destroy();
  }

  private async session(origin: string): Promise<PooledSession> {
    const pool = this.h2.get(origin) ?? [];
    this.h2.set(origin, pool);
    const usable = pool.filter((p) => !p.session.closed && !p.session.destroyed);
    const free = usable
      .filter((p) => p.active < (p.session.remoteSettings.maxConcurrentStreams ?? 100))
      .sort((a, b) => a.active - b.active)[0];
    if (free) return free;
    if (usable.length >= this.maxSessions) return usable.sort((a, b) => a.active - b.active)[0]!;
    const session = http2.connect(origin, { lookup: this.lookup });
    const pooled: PooledSession = { session, active: 0 };
    const drop = () => {
      const i = pool.indexOf(pooled);
      if (i >= 0) pool.splice(i, 1);
    };
    session.on("goaway", drop);
    session.on("close", drop);
    session.on("error", drop);
    session.setTimeout(60_000, () => session.close());
    pool.push(pooled);
    await new Promise<void>((resolve, reject) => {
      session.once("connect", () => {
        session.off("error", reject);
        if (session.alpnProtocol !== "h2") {
          session.destroy();
          reject(Object.assign(new Error("origin does not speak HTTP/2"), { code: "ERR_NO_H2" }));
        } else resolve();
      });
      session.once("error", reject);
    });
    return pooled;
  }

  private async postH2(
    url: URL,
    headers: Record<string, string>,
    body: Buffer,
    signal?: AbortSignal,
  ): Promise<PushResponse> {
    const pooled = await this.session(url.origin);
    pooled.active++;
    try {
      return await new Promise<PushResponse>((resolve, reject) => {
        const stream = pooled.session.request(
          { ":method": "POST", ":path": url.pathname + url.search, ...headers, "content-length": String(body.length) },
          { signal },
        );
        stream.setTimeout(this.timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
        let status = 0;
        let responseHeaders: IncomingHttpHeaders = {};
        stream.on("response", (h) => {
          status = Number(h[":status"]);
          responseHeaders = h;
        });
        stream.on("data", () => undefined);
        stream.on("end", () =>
          status
            ? resolve({ status, headers: flatten(responseHeaders) })
            : reject(Object.assign(new Error("stream ended without a response"), { code: "ERR_NO_RESPONSE" })),
        );
        stream.on("error", reject);
        stream.on("close", () => {
          if (!status)
            reject(Object.assign(new Error("stream closed"), { code: `ERR_STREAM_${stream.rstCode ?? "CLOSED"}` }));
        });
        stream.end(body);
      });
    } finally {
      pooled.active--;
    }
  }

  private postH1(url: URL, headers: Record<string, string>, body: Buffer, signal?: AbortSignal): Promise<PushResponse> {
    return new Promise((resolve, reject) => {
      const req = https.request(url, {
        method: "POST",
        agent: this.agent,
        headers: { ...headers, "content-length": String(body.length) },
        signal,
        timeout: this.timeoutMs,
      });
      req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: flatten(res.headers) }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  }
}

function isNoH2(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? "";
  return code === "ERR_NO_H2" || code.includes("NO_APPLICATION_PROTOCOL");
}

function flatten(h: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(h)) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}
