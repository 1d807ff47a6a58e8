import dns from "node:dns";
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { classifyAddress, type Logger } from "@herald/runtime";
import { Http2Pool, isNoH2, type SendCapacity } from "@herald/sender";

export interface PushResponse {
  status: number;
  headers: IncomingHttpHeaders;
}

export interface PushTransportOptions {
  /** HTTP/2 connections per origin at most; more open only when the others are full. */
  maxConnectionsPerOrigin?: number;
  /** HTTP/1.1 sockets per origin, for push services without HTTP/2. */
  maxSocketsPerOrigin?: number;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  /** HTTP/2 PING after this long without hearing from a push service; 0: never. */
  pingIntervalMs?: number;
  /** Allow loopback/private addresses (dev mode, tests). */
  allowPrivate?: boolean;
  log?: Logger;
}

/** Origins remembered as HTTP/1.1-only; the oldest is forgotten beyond this (and tried over HTTP/2 again). */
const MAX_H1_ORIGINS = 1_000;

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

/**
 * POSTs to push services: over the shared HTTP/2 pool (`@herald/sender`, one pool per
 * origin) and, for an origin that does not offer HTTP/2 by ALPN, over keep-alive
 * HTTP/1.1 from then on. Both connect through the SSRF-guarded lookup. TLS is verified
 * against the system store plus NODE_EXTRA_CA_CERTS, always.
 */
export class PushTransport implements SendCapacity {
  private readonly pool: Http2Pool;
  private readonly h1Origins = new Set<string>();
  private readonly agent: https.Agent;
  private readonly timeoutMs: number;

  constructor(opts: PushTransportOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    const lookup = guardedLookup(opts.allowPrivate ?? false);
    this.pool = new Http2Pool({
      label: "Web Push",
      maxConnections: opts.maxConnectionsPerOrigin ?? 4,
      maxQueued: 10_000,
      requestTimeoutMs: this.timeoutMs,
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
      idleTimeoutMs: opts.idleTimeoutMs ?? 60_000,
      pingIntervalMs: opts.pingIntervalMs ?? 60_000,
      // The status and Retry-After are all Herald reads of a push service's answer.
      maxResponseBytes: 0,
      lookup,
      // A refused address stays refused: the send fails at once instead of after three connections.
      fatalConnectError: (err) => (err as { code?: unknown }).code === "ESSRF",
      log: opts.log,
    });
    this.agent = new https.Agent({ keepAlive: true, maxSockets: opts.maxSocketsPerOrigin ?? 64, lookup });
  }

  async post(url: URL, headers: OutgoingHttpHeaders, body: Buffer, signal: AbortSignal): Promise<PushResponse> {
    const origin = url.origin;
    if (this.h1Origins.has(origin)) return this.postH1(url, headers, body, signal);
    try {
      return await this.pool.request({ origin }, { path: url.pathname + url.search, headers, body }, signal);
    } catch (err) {
      if (!isNoH2(err)) throw err;
      if (this.h1Origins.size >= MAX_H1_ORIGINS) this.h1Origins.delete(this.h1Origins.values().next().value!);
      this.h1Origins.add(origin);
      return this.postH1(url, withoutPseudoHeaders(headers), body, signal);
    }
  }

  /** Origin pools, HTTP/2 connections, streams in use and sends waiting. */
  stats() {
    return this.pool.stats();
  }

  streamCapacity(): number {
    return this.pool.streamCapacity();
  }

  watchCapacity(listener: () => void): void {
    this.pool.watchCapacity(listener);
  }

  async close(): Promise<void> {
    await this.pool.close();
    this.agent.destroy();
  }

  private postH1(url: URL, headers: OutgoingHttpHeaders, body: Buffer, signal: AbortSignal): Promise<PushResponse> {
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
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  }
}

/** The pool added `:method` and `:path` to the headers of the attempt that found no HTTP/2. */
function withoutPseudoHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(":")) out[k] = v;
  return out;
}
