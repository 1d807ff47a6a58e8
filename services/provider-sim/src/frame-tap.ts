import { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";

/** HTTP/2 frame header: length(24) ‖ type(8) ‖ flags(8) ‖ R(1) stream id(31). RFC 9113 §4.1. */
const FRAME_HEADER = 9;
const HEADERS = 0x1;
const SETTINGS = 0x4;
const ACK = 0x1;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTING_SIZE = 6;
/** "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n": the client's connection preface, before its first frame. */
const CLIENT_PREFACE_LENGTH = 24;

/** What the tap reports to, and asks of, the connection it serves. */
export interface StreamLimitTracker {
  /** The SETTINGS_MAX_CONCURRENT_STREAMS to advertise now. */
  advertisedMaxStreams: number;
  /** A SETTINGS frame left for the client, with the limit it carried (undefined: none). */
  settingsSent(maxStreams: number | undefined): void;
  /** The client acknowledged the oldest SETTINGS frame not yet acknowledged. */
  settingsAcknowledged(): void;
  /** The client opened a stream (a HEADERS frame with a new stream id), in wire order. */
  streamOpening(streamId: number): void;
}

/**
 * Sits between a TLS socket and Node's HTTP/2 session. Outbound, it rewrites the
 * SETTINGS_MAX_CONCURRENT_STREAMS value of every SETTINGS frame to the connection's
 * advertised limit; inbound, it notes SETTINGS acknowledgements and new streams in the
 * order they arrive. All bytes pass through otherwise untouched.
 *
 * Why: nghttp2 enforces the limit it advertises and refuses excess streams before
 * JavaScript sees them, so a simulator that let nghttp2 enforce could never count a
 * client's violations; and one port serves APNs (one stream until a valid provider
 * token) beside FCM and Web Push (no such rule). So nghttp2 runs with a limit far above
 * anything advertised, every stream reaches JavaScript, and each new stream is held to
 * the limit the client had acknowledged when it opened it (`connections.ts`).
 */
export class FrameTap extends Duplex {
  private readonly outbound: SettingsRewriter;
  private readonly inbound: InboundScanner;

  constructor(
    readonly socket: TLSSocket,
    tracker: StreamLimitTracker,
  ) {
    super({ allowHalfOpen: false });
    this.outbound = new SettingsRewriter(tracker);
    this.inbound = new InboundScanner(tracker);
    socket.on("data", (chunk: Buffer) => {
      this.inbound.scan(chunk);
      if (!this.push(chunk)) socket.pause();
    });
    socket.on("end", () => this.push(null));
    socket.on("error", (err) => this.destroy(err));
    socket.on("close", () => this.destroy());
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const out = this.outbound.rewrite(chunk);
    if (out.length === 0) callback();
    else this.socket.write(out, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }
}

/** The server's frame stream, split into frames wherever chunks end; only SETTINGS frames (small) are buffered whole. */
export class SettingsRewriter {
  /** Bytes held back at a frame boundary: an incomplete header or SETTINGS frame. */
  private held: Buffer = Buffer.alloc(0);
  /** Payload bytes of the current non-SETTINGS frame still to pass through. */
  private passthrough = 0;

  constructor(private readonly tracker: Pick<StreamLimitTracker, "advertisedMaxStreams" | "settingsSent">) {}

  rewrite(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let rest = chunk;
    while (rest.length > 0) {
      if (this.passthrough > 0) {
        const n = Math.min(this.passthrough, rest.length);
        out.push(rest.subarray(0, n));
        this.passthrough -= n;
        rest = rest.subarray(n);
        continue;
      }
      // At a frame boundary. Held bytes are copies: the writer may reuse a chunk once its write is acknowledged.
      const buf = this.held.length === 0 ? rest : Buffer.concat([this.held, rest]);
      this.held = Buffer.alloc(0);
      rest = Buffer.alloc(0);
      const length = buf.length >= FRAME_HEADER ? buf.readUIntBE(0, 3) : 0;
      const isSettings = buf.length >= FRAME_HEADER && buf[3] === SETTINGS && (buf[4]! & ACK) === 0;
      if (buf.length < FRAME_HEADER || (isSettings && buf.length < FRAME_HEADER + length)) {
        this.held = Buffer.from(buf);
        break;
      }
      if (!isSettings) {
        out.push(buf.subarray(0, FRAME_HEADER));
        this.passthrough = length;
        rest = buf.subarray(FRAME_HEADER);
        continue;
      }
      const frame = Buffer.from(buf.subarray(0, FRAME_HEADER + length));
      let carried: number | undefined;
      for (let p = FRAME_HEADER; p + SETTING_SIZE <= frame.length; p += SETTING_SIZE) {
        if (frame.readUInt16BE(p) !== SETTINGS_MAX_CONCURRENT_STREAMS) continue;
        carried = this.tracker.advertisedMaxStreams;
        frame.writeUInt32BE(carried, p + 2);
      }
      this.tracker.settingsSent(carried);
      out.push(frame);
      rest = buf.subarray(FRAME_HEADER + length);
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }
}

/** The client's frame stream, read for SETTINGS acknowledgements and new streams; it never holds bytes back. */
export class InboundScanner {
  private preface = CLIENT_PREFACE_LENGTH;
  private header: Buffer = Buffer.alloc(0);
  private payloadLeft = 0;
  private lastStream = 0;

  constructor(private readonly tracker: Pick<StreamLimitTracker, "settingsAcknowledged" | "streamOpening">) {}

  scan(chunk: Buffer): void {
    let rest = chunk;
    if (this.preface > 0) {
      const n = Math.min(this.preface, rest.length);
      this.preface -= n;
      rest = rest.subarray(n);
    }
    while (rest.length > 0) {
      if (this.payloadLeft > 0) {
        const n = Math.min(this.payloadLeft, rest.length);
        this.payloadLeft -= n;
        rest = rest.subarray(n);
        continue;
      }
      const need = FRAME_HEADER - this.header.length;
      this.header = Buffer.concat([this.header, rest.subarray(0, need)]);
      rest = rest.subarray(need);
      if (this.header.length < FRAME_HEADER) break;
      const type = this.header[3];
      const streamId = this.header.readUInt32BE(5) & 0x7fff_ffff;
      if (type === SETTINGS && (this.header[4]! & ACK) !== 0) this.tracker.settingsAcknowledged();
      if (type === HEADERS && streamId > this.lastStream) {
        this.lastStream = streamId;
        this.tracker.streamOpening(streamId);
      }
      this.payloadLeft = this.header.readUIntBE(0, 3);
      this.header = Buffer.alloc(0);
    }
  }
}
