import { describe, expect, it } from "vitest";
import { InboundScanner, SettingsRewriter } from "./frame-tap.js";

function frame(type: number, flags: number, payload: Buffer, streamId = 0): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

function settings(values: [number, number][], flags = 0): Buffer {
  const payload = Buffer.alloc(values.length * 6);
  values.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(0x4, flags, payload);
}

/** The server's output: SETTINGS, a response with a body containing bytes that look like a SETTINGS frame, SETTINGS ACK, SETTINGS again. */
function stream(maxStreams: number): Buffer {
  const lookalike = settings([[3, 1_000_000]]);
  return Buffer.concat([
    settings([
      [1, 4096],
      [3, maxStreams],
      [4, 65535],
    ]),
    frame(0x1, 0x4, Buffer.from([0x88]), 1),
    frame(0x0, 0x1, Buffer.concat([lookalike, Buffer.alloc(20_000, 7)]), 1),
    settings([], 0x1),
    settings([[3, maxStreams]]),
  ]);
}

describe("SettingsRewriter", () => {
  it("rewrites MAX_CONCURRENT_STREAMS in every SETTINGS frame and nothing else, however the bytes are chunked", () => {
    const input = stream(1_000_000);
    const expected = stream(7);
    for (const size of [1, 2, 5, 9, 10, 17, 100, 4096, input.length]) {
      const sent: (number | undefined)[] = [];
      const rewriter = new SettingsRewriter({ advertisedMaxStreams: 7, settingsSent: (v) => sent.push(v) });
      const out: Buffer[] = [];
      for (let i = 0; i < input.length; i += size) out.push(rewriter.rewrite(input.subarray(i, i + size)));
      expect(Buffer.concat(out).equals(expected), `chunks of ${size}`).toBe(true);
      expect(sent).toEqual([7, 7]);
    }
  });

  it("advertises the value current when each frame passes, and reports frames without a limit", () => {
    const tracker = {
      advertisedMaxStreams: 1,
      sent: [] as (number | undefined)[],
      settingsSent: (v: number | undefined) => tracker.sent.push(v),
    };
    const rewriter = new SettingsRewriter(tracker);
    const first = rewriter.rewrite(settings([[3, 1_000_000]]));
    tracker.advertisedMaxStreams = 500;
    const second = rewriter.rewrite(settings([[3, 1_000_000]]));
    rewriter.rewrite(settings([[4, 1 << 20]]));
    expect(first.readUInt32BE(11)).toBe(1);
    expect(second.readUInt32BE(11)).toBe(500);
    expect(tracker.sent).toEqual([1, 500, undefined]);
  });
});

describe("InboundScanner", () => {
  it("reports SETTINGS acknowledgements and new streams in wire order, after the preface, however chunked", () => {
    const input = Buffer.concat([
      Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
      settings([[4, 65535]]),
      frame(0x1, 0x4, Buffer.alloc(30, 1), 1),
      frame(0x0, 0x1, Buffer.alloc(5_000, 4), 1),
      settings([], 0x1),
      frame(0x1, 0x4, Buffer.alloc(12, 1), 3),
      frame(0x1, 0x5, Buffer.alloc(3, 1), 1),
      frame(0x8, 0, Buffer.alloc(4, 0), 0),
      settings([], 0x1),
      frame(0x1, 0x4, Buffer.alloc(12, 1), 5),
    ]);
    for (const size of [1, 3, 9, 24, 25, 100, input.length]) {
      const events: string[] = [];
      const scanner = new InboundScanner({
        settingsAcknowledged: () => events.push("ack"),
        streamOpening: (id) => events.push(`open ${id}`),
      });
      for (let i = 0; i < input.length; i += size) scanner.scan(input.subarray(i, i + size));
      expect(events, `chunks of ${size}`).toEqual(["open 1", "ack", "open 3", "ack", "open 5"]);
    }
  });
});
