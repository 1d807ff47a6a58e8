import http2, { type IncomingHttpHeaders } from "node:http2";
import type { Logger } from "@herald/runtime";
import { codeError, Connection } from "./connection.js";

export interface PoolRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface PoolResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Takes the connection that answered out of service; it closes once its streams finish. */
  retire(reason: string): void;
}

/** Which connections a request may use: requests of one group share them, no other group does. */
export interface PoolTarget {
  origin: string;
  group: string;
}

export interface ConnectionPoolOptions {
  /** Connections per group at most; more open only while every open one is full. */
  maxConnections: number;
  /** Requests waiting for a free stream per group; beyond that request() fails at once. */
  maxQueued: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /** Whether an answer shows the peer accepted our credentials: only then does a connection get more than one stream. */
  accepted(status: number, body: string): boolean;
  log?: Logger;
}

interface Waiter {
  req: PoolRequest;
  signal: AbortSignal;
  resolve(res: PoolResponse): void;
  reject(err: unknown): void;
  onAbort(): void;
  requeues: number;
}

interface Group {
  key: string;
  origin: string;
  conns: Connection[];
  queue: Waiter[];
  /** Connections in a row that closed before answering anything. */
  failures: number;
}

/** A request whose stream the peer never processed is re-sent this often without counting as an attempt. */
const MAX_REQUEUES = 5;
/** Connections failing in a row before queued requests are failed (and retried with backoff by the caller). */
const MAX_CONNECT_FAILURES = 3;
const MAX_RESPONSE_BYTES = 64 * 1024;
const CLOSE_GRACE_MS = 5_000;

/**
 * HTTP/2 connections to APNs, pooled per group (one team and key per connection, as
 * token auth requires). A connection carries one stream until an answer shows APNs
 * accepted its token, then as many as the peer's SETTINGS allow, never more: requests
 * beyond that wait in a bounded queue while up to maxConnections open. A GOAWAY or a
 * drop takes the connection out of the pool; requests APNs never processed (refused
 * streams, streams above the GOAWAY's last stream id) are sent again transparently.
 */
export class ConnectionPool {
  private readonly groups = new Map<string, Group>();
  private closing = false;

  constructor(private readonly opts: ConnectionPoolOptions) {}

  request(target: PoolTarget, req: PoolRequest, signal: AbortSignal): Promise<PoolResponse> {
    if (this.closing) return Promise.reject(codeError("connection pool closed", "ERR_APNS_POOL_CLOSED"));
    if (signal.aborted) return Promise.reject(signal.reason);
    const group = this.group(target);
    if (group.queue.length >= this.opts.maxQueued) {
      return Promise.reject(codeError("too many requests waiting for an APNs stream", "ERR_APNS_QUEUE_FULL"));
    }
    return new Promise<PoolResponse>((resolve, reject) => {
      const waiter: Waiter = {
        req,
        signal,
        requeues: 0,
        resolve: (res) => {
          signal.removeEventListener("abort", waiter.onAbort);
          resolve(res);
        },
        reject: (err) => {
          signal.removeEventListener("abort", waiter.onAbort);
          reject(err);
        },
        onAbort: () => {
          const i = group.queue.indexOf(waiter);
          if (i >= 0) {
            group.queue.splice(i, 1);
            waiter.reject(signal.reason);
          }
          // A running stream is cancelled by its own signal and settles in its close handler.
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      group.queue.push(waiter);
      this.dispatch(group);
    });
  }

  /** Connections (any state), streams in use and requests waiting, over every group. */
  stats(): { connections: number; streams: number; queued: number } {
    let connections = 0;
    let streams = 0;
    let queued = 0;
    for (const g of this.groups.values()) {
      connections += g.conns.length;
      queued += g.queue.length;
      for (const c of g.conns) streams += c.active;
    }
    return { connections, streams, queued };
  }

  /** Fails queued requests, lets running ones finish (up to a grace period) and closes every connection. */
  async close(): Promise<void> {
    this.closing = true;
    const conns: Connection[] = [];
    for (const group of this.groups.values()) {
      for (const w of group.queue.splice(0)) w.reject(codeError("connection pool closed", "ERR_APNS_POOL_CLOSED"));
      conns.push(...group.conns);
    }
    const closed = conns.map((c) => c.closed());
    for (const c of conns) c.drain();
    const timer = setTimeout(() => {
      for (const c of conns) c.destroy();
    }, CLOSE_GRACE_MS);
    await Promise.all(closed);
    clearTimeout(timer);
    this.groups.clear();
  }

  private group(target: PoolTarget): Group {
    const key = `${target.origin}|${target.group}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { key, origin: target.origin, conns: [], queue: [], failures: 0 };
      this.groups.set(key, group);
    }
    return group;
  }

  /** Starts queued requests on connections with free streams, and opens connections when none has one. */
  private dispatch(group: Group): void {
    while (group.queue.length > 0) {
      let best: Connection | undefined;
      for (const c of group.conns) {
        if (c.hasRoom() && (!best || c.active < best.active)) best = c;
      }
      if (!best) break;
      this.run(group, best, group.queue.shift()!);
    }
    this.grow(group);
    if (group.conns.length === 0 && group.queue.length === 0) this.groups.delete(group.key);
  }

  private grow(group: Group): void {
    if (this.closing) return;
    let connecting = 0;
    let live = 0;
    for (const c of group.conns) {
      if (c.state === "connecting") connecting++;
      if (c.state !== "draining") live++;
    }
    // A connection being opened will take at least one request; open more only for the rest.
    while (group.queue.length > connecting && live < this.opts.maxConnections) {
      this.open(group);
      connecting++;
      live++;
    }
  }

  private open(group: Group): void {
    const conn: Connection = new Connection(group.origin, {
      requestTimeoutMs: this.opts.requestTimeoutMs,
      idleTimeoutMs: this.opts.idleTimeoutMs,
      log: this.opts.log,
      onCapacity: () => this.dispatch(group),
      onDraining: () => this.dispatch(group),
      onClose: () => this.closed(group, conn),
    });
    group.conns.push(conn);
  }

  private closed(group: Group, conn: Connection): void {
    const i = group.conns.indexOf(conn);
    if (i >= 0) group.conns.splice(i, 1);
    if (!conn.answered) group.failures++;
    const usable = group.conns.some((c) => c.state === "open");
    if (!usable && group.failures >= MAX_CONNECT_FAILURES && group.queue.length > 0) {
      const err = conn.error ?? codeError("APNs connection closed before answering", "ERR_APNS_CONNECTION_CLOSED");
      this.opts.log?.warn(
        { origin: group.origin, err },
        "APNs connections keep failing; failing queued sends for a later retry",
      );
      for (const w of group.queue.splice(0)) w.reject(err);
    }
    this.dispatch(group);
  }

  private run(group: Group, conn: Connection, w: Waiter): void {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = conn.session.request(
        { ":method": "POST", ":path": w.req.path, ...w.req.headers, "content-length": String(w.req.body.length) },
        { signal: w.signal },
      );
    } catch (err) {
      // The session closed or ran out of stream ids between our bookkeeping and the call.
      this.requeueOrFail(group, w, err);
      conn.drain();
      return;
    }
    conn.active++;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    let ended = false;
    let timedOut = false;
    let streamError: Error | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h;
    });
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
    });
    stream.on("end", () => (ended = true));
    stream.on("error", (err) => (streamError = err));
    stream.setTimeout(this.opts.requestTimeoutMs, () => {
      timedOut = true;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      // APNs answers in milliseconds: a silent stream most likely means a dead connection.
      conn.drain();
    });
    stream.once("close", () => {
      conn.streamEnded();
      if (status && ended) {
        const body = Buffer.concat(chunks).toString("utf8");
        conn.answered = true;
        group.failures = 0;
        if (!conn.trusted && this.opts.accepted(status, body)) conn.trusted = true;
        w.resolve({ status, headers, body, retire: (reason) => this.retire(group, conn, reason) });
      } else if (w.signal.aborted) {
        w.reject(w.signal.reason);
      } else if (timedOut) {
        w.reject(codeError("APNs did not answer in time", "ETIMEDOUT"));
      } else if (conn.neverProcessed(stream)) {
        this.requeueOrFail(group, w, streamError ?? codeError("stream refused", "ERR_HTTP2_REFUSED_STREAM"));
      } else {
        const code = stream.rstCode ?? "CLOSED";
        w.reject(streamError ?? codeError(`stream closed without an answer (${code})`, `ERR_HTTP2_STREAM_${code}`));
      }
      this.dispatch(group);
    });
    stream.end(w.req.body);
  }

  private requeueOrFail(group: Group, w: Waiter, err: unknown): void {
    if (w.requeues >= MAX_REQUEUES) {
      w.reject(err);
      return;
    }
    w.requeues++;
    group.queue.unshift(w);
    queueMicrotask(() => this.dispatch(group));
  }

  private retire(group: Group, conn: Connection, reason: string): void {
    if (conn.state === "draining") return;
    this.opts.log?.info({ origin: group.origin, reason }, "retiring APNs connection");
    conn.drain();
  }
}
