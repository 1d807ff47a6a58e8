import http2 from "node:http2";
import type { StreamLimitTracker } from "./frame-tap.js";
import type { Platform } from "./platform.js";

/**
 * The limit nghttp2 itself enforces: far above anything advertised, so every stream
 * reaches JavaScript and a client's violation is refused and counted here rather than
 * silently by nghttp2 (see `frame-tap.ts`).
 */
export const NGHTTP2_STREAM_LIMIT = 1_000_000;

/** What a connection's provider-specific state adds to its admin view (APNs: team and token updates). */
export interface ConnectionAnnotation {
  view(): Record<string, unknown>;
}

export interface ConnectionView {
  id: number;
  remote: string;
  opened_at: string;
  closed_at: string | null;
  /** SETTINGS_MAX_CONCURRENT_STREAMS as last advertised to the client… */
  advertised_max_streams: number;
  /** …and as last acknowledged by it: what its next APNs stream is held to. */
  acknowledged_max_streams: number;
  /** Most streams the client had open at once, refused ones included. */
  max_concurrent_streams: number;
  /** Streams opened beyond the advertised limit (each refused with REFUSED_STREAM, then GOAWAY). */
  violations: number;
  requests: number;
  platforms: Platform[];
  apns: Record<string, unknown> | null;
}

/**
 * One HTTP/2 connection to the TLS port. Every connection starts by advertising a
 * single stream, as APNs does until it has seen a request with a valid provider token.
 *
 * An APNs stream is held to the limit the client had acknowledged (SETTINGS ACK) when
 * its HEADERS arrived, and before any acknowledgement to that first single stream: a
 * client must read the server's SETTINGS before it opens a second stream, and a raise
 * counts only once the client has seen it. FCM and Web Push streams (whose real services
 * advertise 100 or more from the start) are held only to `maxStreams`, and their first
 * request raises the advertisement to it.
 */
export class Connection implements StreamLimitTracker {
  readonly openedAt = new Date().toISOString();
  closedAt: string | null = null;
  open = 0;
  maxOpen = 0;
  violations = 0;
  requests = 0;
  readonly platforms = new Set<Platform>();
  /** Provider-specific state, e.g. the APNs provider-token rules of this connection. */
  apns?: ConnectionAnnotation;
  private advertised = 1;
  private session?: http2.ServerHttp2Session;
  /** Limits of SETTINGS frames sent and not yet acknowledged, oldest first. */
  private readonly unacknowledged: (number | undefined)[] = [];
  private acknowledged = 1;
  /** The acknowledged limit at the moment each stream's HEADERS arrived, until the stream is admitted. */
  private readonly limitAtOpening = new Map<number, number>();

  constructor(
    readonly id: number,
    readonly remote: string,
    private readonly maxStreams: number,
  ) {}

  get advertisedMaxStreams(): number {
    return this.advertised;
  }

  settingsSent(maxStreams: number | undefined): void {
    this.unacknowledged.push(maxStreams);
  }

  settingsAcknowledged(): void {
    const limit = this.unacknowledged.shift();
    if (limit !== undefined) this.acknowledged = limit;
  }

  streamOpening(streamId: number): void {
    this.limitAtOpening.set(streamId, this.acknowledged);
  }

  attach(session: http2.ServerHttp2Session): void {
    this.session = session;
  }

  streamOpened(): void {
    this.open += 1;
    this.maxOpen = Math.max(this.maxOpen, this.open);
  }

  streamClosed(streamId: number): void {
    this.open -= 1;
    this.limitAtOpening.delete(streamId);
  }

  /** Whether a newly opened stream of `platform` fits its limit; a stream that does not is counted as a violation. */
  admit(platform: Platform, streamId: number): boolean {
    this.requests += 1;
    this.platforms.add(platform);
    const acknowledged = this.limitAtOpening.get(streamId) ?? this.acknowledged;
    this.limitAtOpening.delete(streamId);
    const limit = platform === "apns" ? acknowledged : this.maxStreams;
    if (this.open <= limit) return true;
    this.violations += 1;
    return false;
  }

  /** Advertises `maxStreams` from now on (APNs: after the first valid provider token). */
  raiseStreamLimit(): void {
    if (this.advertised >= this.maxStreams) return;
    this.advertised = this.maxStreams;
    // The frame tap rewrites this SETTINGS frame's value to the advertised one.
    if (this.session && !this.session.closed && !this.session.destroyed) {
      this.session.settings({ maxConcurrentStreams: NGHTTP2_STREAM_LIMIT });
    }
  }

  /**
   * GOAWAY with a JSON reason in its debug data, as APNs sends it; streams already
   * accepted finish, the client must open a new connection for anything else.
   */
  goAway(reason: string): void {
    const session = this.session;
    if (!session || session.closed || session.destroyed) return;
    // lastStreamID 0: Node fills in the last stream it processed.
    session.goaway(http2.constants.NGHTTP2_NO_ERROR, 0, Buffer.from(JSON.stringify({ reason })));
    session.close();
  }

  view(): ConnectionView {
    return {
      id: this.id,
      remote: this.remote,
      opened_at: this.openedAt,
      closed_at: this.closedAt,
      advertised_max_streams: this.advertised,
      acknowledged_max_streams: this.acknowledged,
      max_concurrent_streams: this.maxOpen,
      violations: this.violations,
      requests: this.requests,
      platforms: [...this.platforms],
      apns: this.apns?.view() ?? null,
    };
  }
}

/** Live HTTP/2 connections plus the most recent closed ones, for the admin API. */
export class ConnectionRegistry {
  private nextId = 1;
  private readonly live = new Set<Connection>();
  private closed: Connection[] = [];

  constructor(
    readonly maxStreams: number,
    private readonly keepClosed = 1_000,
  ) {}

  open(remote: string): Connection {
    const conn = new Connection(this.nextId++, remote, this.maxStreams);
    this.live.add(conn);
    return conn;
  }

  close(conn: Connection): void {
    if (!this.live.delete(conn)) return;
    conn.closedAt = new Date().toISOString();
    this.closed.push(conn);
    if (this.closed.length > this.keepClosed) this.closed = this.closed.slice(-this.keepClosed);
  }

  /** Oldest first, live and closed. */
  list(filter: (c: Connection) => boolean = () => true): ConnectionView[] {
    return [...this.closed, ...this.live]
      .filter(filter)
      .sort((a, b) => a.id - b.id)
      .map((c) => c.view());
  }

  /** Forgets closed connections; live ones keep their counters. */
  clearClosed(): void {
    this.closed = [];
  }
}
