import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http2";
import type { Connection } from "./http2-connection.js";

/** Where a request goes: requests of one (origin, group) share connections, no other's do. */
export interface Http2Target {
  origin: string;
  /** APNs: one team and key per connection. Absent: one pool for the whole origin. */
  group?: string;
}

export interface Http2Request {
  /** Default POST. */
  method?: string;
  /** Path and query; a Web Push path is a secret and never leaves the pool in a log or error. */
  path: string;
  /** The pool adds `:method`, `:path` and `content-length` to this object: pass one per request. */
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

export interface Http2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** UTF-8, at most maxResponseBytes of it. */
  readonly body: string;
  /** Takes the connection that answered out of service; it closes once its streams finish. */
  retire(reason: string): void;
}

/** What a provider needs of the pool (tests script it). */
export interface Http2Client {
  request(target: Http2Target, req: Http2Request, signal: AbortSignal): Promise<Http2Response>;
  close(): Promise<void>;
}

/** One (origin, group) pool: its connections and the requests waiting for a stream. */
export interface Group {
  origin: string;
  name: string;
  conns: Connection[];
  queue: Exchange[];
  /** Connections in a row that closed before answering anything. */
  failures: number;
  removed: boolean;
  dispatching: boolean;
  again: boolean;
}

/** What an exchange's stream reports to. */
export interface StreamOwner {
  readonly maxResponseBytes: number;
  streamClosed(x: Exchange, stream: ClientHttp2Stream): void;
}

const EXCHANGE = Symbol("exchange");
type TaggedStream = ClientHttp2Stream & { [EXCHANGE]: Exchange };

/** One request from request() to its answer, across re-sends. */
export class Exchange {
  conn: Connection | undefined = undefined;
  stream: ClientHttp2Stream | undefined = undefined;
  status = 0;
  headers: IncomingHttpHeaders | undefined = undefined;
  chunks: Buffer | Buffer[] | undefined = undefined;
  size = 0;
  ended = false;
  streamError: Error | undefined = undefined;
  settled = false;
  requeues = 0;
  resolve!: (res: Http2Response) => void;
  reject!: (err: unknown) => void;

  constructor(
    readonly owner: StreamOwner,
    readonly group: Group,
    readonly req: Http2Request,
    readonly signal: AbortSignal,
    readonly deadline: number,
  ) {}
}

export class Answer implements Http2Response {
  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly body: string,
    private readonly conn: Connection,
  ) {}

  retire(reason: string): void {
    this.conn.retire(reason);
  }
}

// Stream listeners shared by every stream (the exchange rides on the stream): no closures per request.
function onResponse(this: TaggedStream, headers: IncomingHttpHeaders): void {
  const x = this[EXCHANGE];
  x.status = Number(headers[":status"]);
  x.headers = headers;
}
function onData(this: TaggedStream, chunk: Buffer): void {
  const x = this[EXCHANGE];
  x.size += chunk.length;
  if (x.size > x.owner.maxResponseBytes) return;
  if (x.chunks === undefined) x.chunks = chunk;
  else if (Array.isArray(x.chunks)) x.chunks.push(chunk);
  else x.chunks = [x.chunks, chunk];
}
function onEnd(this: TaggedStream): void {
  this[EXCHANGE].ended = true;
}
function onError(this: TaggedStream, err: Error): void {
  this[EXCHANGE].streamError = err;
}
function onClose(this: TaggedStream): void {
  const x = this[EXCHANGE];
  x.owner.streamClosed(x, this);
}

/**
 * Opens a stream for `x` on `conn` and sends its request; throws when the session
 * cannot take it (closed, out of stream ids).
 */
export function startStream(x: Exchange, conn: Connection): void {
  const { req } = x;
  const headers = req.headers;
  headers[":method"] = req.method ?? "POST";
  headers[":path"] = req.path;
  headers["content-length"] = req.body.length;
  const stream = conn.session.request(headers) as TaggedStream;
  conn.active++;
  x.conn = conn;
  x.stream = stream;
  x.status = 0;
  x.headers = undefined;
  x.chunks = undefined;
  x.size = 0;
  x.ended = false;
  x.streamError = undefined;
  stream[EXCHANGE] = x;
  stream.on("response", onResponse);
  stream.on("data", onData);
  stream.on("end", onEnd);
  stream.on("error", onError);
  stream.once("close", onClose);
  stream.end(req.body);
}

export function bodyText(chunks: Buffer | Buffer[] | undefined): string {
  if (chunks === undefined) return "";
  return (Array.isArray(chunks) ? Buffer.concat(chunks) : chunks).toString("utf8");
}
