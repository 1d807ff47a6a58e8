import http2, { type ClientHttp2Stream } from "node:http2";
import type { LookupFunction } from "node:net";
import type { Logger } from "@herald/runtime";
import { Connection, Http2PoolError, SOCKET_LINGER_MS, type Timing } from "./http2-connection.js";
import {
  Answer,
  bodyText,
  Exchange,
  startStream,
  type Group,
  type Http2Client,
  type Http2Request,
  type Http2Response,
  type Http2Target,
  type StreamOwner,
} from "./http2-exchange.js";

export { ERR_NO_H2, Http2PoolError, isNoH2 } from "./http2-connection.js";
export type { Http2Client, Http2Request, Http2Response, Http2Target } from "./http2-exchange.js";

export interface Http2PoolOptions {
  /** Names the peer in logs and errors: "APNs", "FCM", "Web Push". */
  label: string;
  /** Connections per (origin, group) at most; more open only while every open one is full. */
  maxConnections: number;
  /** Requests waiting for a stream per (origin, group); beyond that request() fails at once. */
  maxQueued: number;
  /** (origin, group) pools at once; an idle one is closed to make room, else request() fails. Default 256. */
  maxOrigins?: number;
  /** Streams per connection at most, whatever the peer's SETTINGS allow. Default 1000. */
  maxStreamsPerConnection?: number;
  /** From request() to the answer, queueing included. */
  requestTimeoutMs: number;
  /** TCP, TLS and the peer's first SETTINGS. */
  connectTimeoutMs: number;
  /** A connection without a stream for this long is closed. */
  idleTimeoutMs: number;
  /** A connection that heard nothing for this long gets a PING; 0: never. */
  pingIntervalMs: number;
  /** An unanswered PING closes the connection after this. Default 10 s. */
  pingTimeoutMs?: number;
  /**
   * Whether an answer shows the peer accepted our credentials (APNs). With it, a new
   * connection carries one stream until such an answer; without it, as many as the
   * peer's SETTINGS allow from the start.
   */
  accepted?(status: number, body: string): boolean;
  /** Response bytes kept; the rest is read and dropped. Default 64 KiB. */
  maxResponseBytes?: number;
  /** DNS lookup for new connections (Web Push: the SSRF guard). */
  lookup?: LookupFunction;
  /**
   * Connect errors that fail the requests waiting at once instead of after three failed
   * connections (Web Push: an address the SSRF guard refused). An origin without HTTP/2
   * always does.
   */
  fatalConnectError?(err: Error): boolean;
  log?: Logger;
}

/** A request whose stream the peer never processed is re-sent this often without counting as an attempt. */
const MAX_REQUEUES = 5;
/** Connections failing in a row before queued requests are failed (and retried with backoff by the caller). */
const MAX_CONNECT_FAILURES = 3;
const CLOSE_GRACE_MS = 5_000;
/** Streams a connection still connecting is expected to take, when the peer's SETTINGS decide. */
const ASSUMED_STREAMS = 100;

/**
 * What sizes a sender's sends in flight (packages/sender/src/send-slots.ts): the streams
 * its provider connections carry at once, and word when that changes.
 */
export interface SendCapacity {
  /** Requests the open connections may carry at once now, summed over every origin and group. */
  streamCapacity(): number;
  /** `listener` runs whenever streamCapacity() may have changed (SETTINGS, trust, a connection opening or leaving). */
  watchCapacity(listener: () => void): void;
}

/**
 * The HTTP/2 client every sender uses (APNs, FCM, Web Push): connections pooled per
 * (origin, group), each carrying as many streams as the peer's SETTINGS allow (one until
 * trusted, when `accepted` is given), at most maxConnections per pool, further requests
 * waiting in a bounded queue. A GOAWAY or a drop takes a connection out of service;
 * requests the peer never processed (refused streams, streams above the GOAWAY's last
 * stream id, streams never sent) are re-sent on another connection without the caller
 * seeing it. One timer per pool sweeps request and connect deadlines, PING keep-alive
 * and idle connections; it runs only while there is something to watch.
 */
export class Http2Pool implements Http2Client, StreamOwner, SendCapacity {
  readonly maxResponseBytes: number;
  private readonly groups = new Map<string, Map<string, Group>>();
  private groupCount = 0;
  private readonly conns = new Set<Connection>();
  /** Every unsettled request, oldest first: deadlines come in the same order. */
  private readonly pending = new Set<Exchange>();
  /** Unsettled requests per abort signal: one listener per signal, not per request. */
  private readonly watched = new Map<AbortSignal, Set<Exchange>>();
  private readonly timing: Timing;
  private readonly tickMs: number;
  private readonly maxOrigins: number;
  private readonly maxStreams: number;
  private timer: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly capacityListeners: (() => void)[] = [];
  private capacity = 0;

  constructor(private readonly opts: Http2PoolOptions) {
    this.maxResponseBytes = opts.maxResponseBytes ?? 64 * 1024;
    this.maxOrigins = opts.maxOrigins ?? 256;
    this.maxStreams = opts.maxStreamsPerConnection ?? 1_000;
    this.timing = {
      connectTimeoutMs: opts.connectTimeoutMs,
      idleTimeoutMs: opts.idleTimeoutMs,
      pingIntervalMs: opts.pingIntervalMs,
      pingTimeoutMs: opts.pingTimeoutMs ?? 10_000,
    };
    const finest = Math.min(
      opts.requestTimeoutMs,
      opts.connectTimeoutMs,
      opts.idleTimeoutMs,
      this.timing.pingTimeoutMs,
      opts.pingIntervalMs > 0 ? opts.pingIntervalMs : Number.POSITIVE_INFINITY,
    );
    // Deadlines are met to within a quarter of the shortest of them, and a second at most.
    this.tickMs = Math.max(5, Math.min(1_000, Math.floor(finest / 4)));
  }

  request(target: Http2Target, req: Http2Request, signal: AbortSignal): Promise<Http2Response> {
    if (this.closing) return Promise.reject(this.closedError());
    if (signal.aborted) return Promise.reject(signal.reason);
    const group = this.group(target);
    if (!group) {
      return Promise.reject(
        new Http2PoolError(
          `${this.opts.label}: connections to ${this.maxOrigins} origins already open`,
          "ERR_HTTP2_POOL_ORIGINS_FULL",
        ),
      );
    }
    if (group.queue.length >= this.opts.maxQueued) {
      return Promise.reject(
        new Http2PoolError(`too many requests waiting for a ${this.opts.label} stream`, "ERR_HTTP2_POOL_QUEUE_FULL"),
      );
    }
    const x = new Exchange(this, group, req, signal, Date.now() + this.opts.requestTimeoutMs);
    const answer = new Promise<Http2Response>((resolve, reject) => {
      x.resolve = resolve;
      x.reject = reject;
    });
    this.pending.add(x);
    this.watch(x);
    this.startSweep();
    group.queue.push(x);
    this.dispatch(group);
    return answer;
  }

  /** Origin pools, connections (any state), streams in use and requests waiting. */
  stats(): { origins: number; connections: number; streams: number; queued: number } {
    let streams = 0;
    let queued = 0;
    for (const c of this.conns) streams += c.active;
    for (const byName of this.groups.values()) for (const g of byName.values()) queued += g.queue.length;
    return { origins: this.groupCount, connections: this.conns.size, streams, queued };
  }

  streamCapacity(): number {
    return this.capacity;
  }

  watchCapacity(listener: () => void): void {
    this.capacityListeners.push(listener);
  }

  /** Sums the connections' stream limits again (on their events, not per stream) and tells the watchers of a change. */
  private recount(): void {
    let capacity = 0;
    for (const c of this.conns) capacity += c.streamLimit();
    if (capacity === this.capacity) return;
    this.capacity = capacity;
    for (const listener of this.capacityListeners) listener();
  }

  /** Fails queued requests, lets running ones finish (up to a grace period) and closes every connection. */
  async close(): Promise<void> {
    this.closing = true;
    for (const byName of this.groups.values()) {
      for (const g of byName.values()) for (const x of g.queue.splice(0)) this.fail(x, this.closedError());
    }
    const conns = [...this.conns];
    const closed = conns.map((c) => c.closed());
    for (const c of conns) {
      if (c.state === "connecting") c.destroy();
      else c.drain();
    }
    // Idle ones go once their GOAWAY has left, busy ones when their streams end or the grace is up.
    const linger = setTimeout(() => {
      for (const c of conns) if (c.active === 0) c.destroy();
    }, SOCKET_LINGER_MS);
    const grace = setTimeout(() => {
      for (const c of conns) c.destroy();
    }, CLOSE_GRACE_MS);
    await Promise.all(closed);
    clearTimeout(linger);
    clearTimeout(grace);
    this.groups.clear();
    this.groupCount = 0;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** @internal A stream of `x` closed: its answer, a re-send, or its failure. */
  streamClosed(x: Exchange, stream: ClientHttp2Stream): void {
    const conn = x.conn!;
    const group = x.group;
    conn.streamEnded();
    x.conn = undefined;
    x.stream = undefined;
    if (!x.settled) {
      if (x.status && x.ended) {
        const body = bodyText(x.chunks);
        conn.answers++;
        conn.answered = true;
        group.failures = 0;
        if (!conn.trusted && this.opts.accepted?.(x.status, body)) {
          conn.markTrusted();
          this.recount();
        }
        this.succeed(x, new Answer(x.status, x.headers!, body, conn));
      } else if (conn.neverProcessed(stream)) {
        this.requeueOrFail(x, x.streamError ?? new Http2PoolError("stream refused", "ERR_HTTP2_REFUSED_STREAM"));
      } else {
        const code = stream.rstCode ?? "CLOSED";
        const err = new Http2PoolError(
          `${this.opts.label} stream closed without an answer (${code})`,
          `ERR_HTTP2_STREAM_${code}`,
        );
        this.fail(x, x.streamError ?? err);
      }
    }
    this.dispatch(group);
  }

  private closedError(): Http2PoolError {
    return new Http2PoolError(`${this.opts.label} connection pool closed`, "ERR_HTTP2_POOL_CLOSED");
  }

  /** The pool of a target, made if need be (closing an idle one when at maxOrigins); undefined when full. */
  private group(target: Http2Target): Group | undefined {
    const name = target.group ?? "";
    let byName = this.groups.get(target.origin);
    const found = byName?.get(name);
    if (found) return found;
    if (this.groupCount >= this.maxOrigins && !this.evictIdle()) return undefined;
    if (!byName) {
      byName = new Map();
      this.groups.set(target.origin, byName);
    }
    const group: Group = {
      origin: target.origin,
      name,
      conns: [],
      queue: [],
      failures: 0,
      removed: false,
      dispatching: false,
      again: false,
    };
    byName.set(name, group);
    this.groupCount++;
    return group;
  }

  /** Closes the oldest pool without streams or waiting requests. */
  private evictIdle(): boolean {
    for (const byName of this.groups.values()) {
      for (const g of byName.values()) {
        if (g.queue.length > 0 || g.conns.some((c) => c.active > 0)) continue;
        this.removeGroup(g);
        for (const c of g.conns) c.drain();
        return true;
      }
    }
    return false;
  }

  private removeGroup(group: Group): void {
    if (group.removed) return;
    group.removed = true;
    this.groupCount--;
    const byName = this.groups.get(group.origin);
    if (byName?.get(group.name) !== group) return;
    byName.delete(group.name);
    if (byName.size === 0) this.groups.delete(group.origin);
  }

  /** Starts queued requests on connections with free streams, and opens connections when none has one. */
  private dispatch(group: Group): void {
    // A connection draining while we start a stream calls back in here: run the loop again instead.
    if (group.dispatching) {
      group.again = true;
      return;
    }
    group.dispatching = true;
    try {
      do {
        group.again = false;
        while (group.queue.length > 0) {
          const conn = this.pick(group);
          if (!conn) break;
          this.start(group.queue.shift()!, conn);
        }
        this.grow(group);
      } while (group.again);
    } finally {
      group.dispatching = false;
    }
    if (group.conns.length === 0 && group.queue.length === 0) this.removeGroup(group);
  }

  /** The least busy connection with a free stream. */
  private pick(group: Group): Connection | undefined {
    let best: Connection | undefined;
    for (const c of group.conns) if (c.hasRoom() && (!best || c.active < best.active)) best = c;
    return best;
  }

  private grow(group: Group): void {
    if (this.closing || group.removed) return;
    // A connection being opened will take some of the queue; open more only for the rest.
    const perConnection = this.opts.accepted ? 1 : ASSUMED_STREAMS;
    let expected = 0;
    let live = 0;
    for (const c of group.conns) {
      if (c.state === "connecting") expected += perConnection;
      if (c.state !== "draining") live++;
    }
    while (group.queue.length > expected && live < this.opts.maxConnections) {
      this.open(group);
      expected += perConnection;
      live++;
    }
  }

  private open(group: Group): void {
    const conn = new Connection(
      group.origin,
      {
        label: this.opts.label,
        maxStreams: this.maxStreams,
        trustedFromStart: !this.opts.accepted,
        lookup: this.opts.lookup,
        fatalConnectError: this.opts.fatalConnectError,
        log: this.opts.log,
        onCapacity: () => {
          this.recount();
          this.dispatch(group);
        },
        onDraining: () => {
          this.recount();
          this.dispatch(group);
        },
        onClose: (c) => this.connectionClosed(group, c),
      },
      Date.now(),
    );
    group.conns.push(conn);
    this.conns.add(conn);
    this.startSweep();
  }

  private connectionClosed(group: Group, conn: Connection): void {
    const i = group.conns.indexOf(conn);
    if (i >= 0) group.conns.splice(i, 1);
    this.conns.delete(conn);
    this.recount();
    if (!conn.answered) group.failures++;
    const usable = group.conns.some((c) => c.state === "open");
    if (!usable && group.queue.length > 0 && (conn.fatal || group.failures >= MAX_CONNECT_FAILURES)) {
      const err =
        conn.error ??
        new Http2PoolError(`${this.opts.label} connection closed before answering`, "ERR_HTTP2_CONNECTION_CLOSED");
      if (!conn.fatal) {
        this.opts.log?.warn(
          { origin: group.origin, err },
          `${this.opts.label} connections keep failing; failing queued sends for a later retry`,
        );
      }
      for (const x of group.queue.splice(0)) this.fail(x, err);
    }
    this.dispatch(group);
  }

  private start(x: Exchange, conn: Connection): void {
    try {
      startStream(x, conn);
    } catch (err) {
      // The session closed or ran out of stream ids between our bookkeeping and the call.
      this.requeueOrFail(x, err);
      conn.drain();
    }
  }

  private requeueOrFail(x: Exchange, err: unknown): void {
    if (x.settled) return;
    if (this.closing || x.requeues >= MAX_REQUEUES) {
      this.fail(x, this.closing ? this.closedError() : err);
      return;
    }
    x.requeues++;
    x.group.queue.unshift(x);
  }

  private succeed(x: Exchange, res: Http2Response): void {
    if (x.settled) return;
    this.forget(x);
    x.resolve(res);
  }

  private fail(x: Exchange, err: unknown): void {
    if (x.settled) return;
    this.forget(x);
    x.reject(err);
  }

  private forget(x: Exchange): void {
    x.settled = true;
    this.pending.delete(x);
    const set = this.watched.get(x.signal);
    if (!set) return;
    set.delete(x);
    if (set.size === 0) {
      this.watched.delete(x.signal);
      x.signal.removeEventListener("abort", this.aborted);
    }
  }

  private watch(x: Exchange): void {
    let set = this.watched.get(x.signal);
    if (!set) {
      set = new Set();
      this.watched.set(x.signal, set);
      x.signal.addEventListener("abort", this.aborted, { once: true });
    }
    set.add(x);
  }

  /** A caller's signal aborted: its queued requests leave the queue, its running streams are cancelled. */
  private readonly aborted = (event: Event): void => {
    const signal = event.target as AbortSignal;
    const set = this.watched.get(signal);
    this.watched.delete(signal);
    if (!set) return;
    for (const x of set) this.stop(x, signal.reason, false);
  };

  /** Ends an unsettled request now, whether it waits in the queue or runs on a stream. */
  private stop(x: Exchange, err: unknown, drainConnection: boolean): void {
    if (x.settled) return;
    if (x.stream) {
      // Its close handler only does the bookkeeping: the caller hears now, not when the peer agrees.
      x.stream.close(http2.constants.NGHTTP2_CANCEL);
      if (drainConnection) x.conn?.drain();
    } else {
      const i = x.group.queue.indexOf(x);
      if (i >= 0) x.group.queue.splice(i, 1);
    }
    this.fail(x, err);
  }

  private startSweep(): void {
    if (this.timer) return;
    this.timer = setInterval(this.sweep, this.tickMs);
    this.timer.unref();
  }

  private readonly sweep = (): void => {
    const now = Date.now();
    for (const x of this.pending) {
      if (x.deadline > now) break;
      const host = new URL(x.group.origin).host;
      const err = new Http2PoolError(
        `no answer from ${this.opts.label} (${host}) within ${this.opts.requestTimeoutMs} ms`,
        "ETIMEDOUT",
      );
      // The peer answers in milliseconds: a silent stream most likely means a dead connection.
      this.stop(x, err, true);
    }
    for (const c of this.conns) c.sweep(now, this.timing);
    if (this.conns.size === 0 && this.pending.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  };
}
