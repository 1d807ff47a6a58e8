import { Writable } from "node:stream";
import { setImmediate as tick } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { waitUntil } from "../../test/support/wait.js";
import {
  CSV_HEADER,
  csvField,
  csvRow,
  chunkText,
  type ExportFormat,
  exportStream,
  exportText,
  ndjsonLine,
  spreadsheetSafe,
  startedIterable,
} from "./delivery-export.js";
import type { DeliveryJson } from "./delivery-views.js";

const receipt = (over: Partial<DeliveryJson> = {}): DeliveryJson => ({
  device_id: "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11",
  external_id: "user-42",
  platform: "ios",
  outcome: "failed",
  reason: "BadTopic",
  attempts: 2,
  at: "2026-11-21T10:00:00.000Z",
  ...over,
});

async function* from<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

async function text(stream: AsyncIterable<string | Buffer>): Promise<string> {
  let out = "";
  for await (const piece of stream) out += piece.toString();
  return out;
}

describe("CSV", () => {
  it("quotes per RFC 4180 only the fields that need it, and writes null as an empty field", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField(3)).toBe("3");
    expect(csvField(null)).toBe("");
    expect(csvField("")).toBe("");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("line\nbreak")).toBe('"line\nbreak"');
    expect(csvField("cr\rhere")).toBe('"cr\rhere"');
    expect(csvField("'quote and ; semicolon")).toBe("'quote and ; semicolon");
  });

  it("keeps text that a spreadsheet would run as a formula as text", () => {
    for (const formula of ["=1+2", "+1", "-1+2", "@SUM(A1)", "\t=1", "\r=1"]) {
      expect(spreadsheetSafe(formula), JSON.stringify(formula)).toBe(`'${formula}`);
    }
    for (const fine of ["user-1", "1-2", "a=b", " =1", "", "'=already"]) {
      expect(spreadsheetSafe(fine), JSON.stringify(fine)).toBe(fine);
    }
    expect(spreadsheetSafe(null)).toBeNull();
  });

  it("writes a row in the header's column order, guarding the user's and the provider's text only", () => {
    expect(CSV_HEADER).toBe("device_id,external_id,platform,outcome,reason,attempts,at\r\n");
    expect(csvRow(receipt())).toBe(
      "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11,user-42,ios,failed,BadTopic,2,2026-11-21T10:00:00.000Z\r\n",
    );
    expect(csvRow(receipt({ external_id: '=HYPERLINK("https://evil.example","x")', reason: "-1,2" }))).toBe(
      '7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11,"\'=HYPERLINK(""https://evil.example"",""x"")",ios,failed,' +
        '"\'-1,2",2,2026-11-21T10:00:00.000Z\r\n',
    );
    expect(csvRow(receipt({ external_id: null, reason: null, outcome: "delivered", platform: null }))).toBe(
      "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11,,,delivered,,2,2026-11-21T10:00:00.000Z\r\n",
    );
  });
});

describe("exportText", () => {
  it("writes the CSV header first, then the rows of every chunk; an empty export is the header alone", async () => {
    const chunks = [[receipt(), receipt({ attempts: 1 })], [], [receipt({ outcome: "bounced" })]];
    const csv = await text(exportText("csv", from(chunks.map((c) => chunkText("csv", c)))));
    expect(csv.split("\r\n")).toHaveLength(5);
    expect(csv.startsWith(CSV_HEADER)).toBe(true);
    expect(csv.endsWith("\r\n")).toBe(true);
    expect(await text(exportText("csv", from([])))).toBe(CSV_HEADER);
  });

  it("writes NDJSON as the items themselves, one per line, without the spreadsheet guard", async () => {
    const items = [receipt({ external_id: "=1+2", reason: "line\nbreak" }), receipt({ reason: null })];
    const ndjson = await text(exportText("ndjson", from([chunkText("ndjson", items)])));
    expect(ndjson).toBe(items.map(ndjsonLine).join(""));
    expect(
      ndjson
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(items);
    expect(await text(exportText("ndjson", from([])))).toBe("");
  });
});

describe("exportStream", () => {
  /** Chunks of 1,000 receipts, counting how many were pulled and whether the source was closed. */
  function source(chunks: number, failAt?: number, format: ExportFormat = "csv") {
    const state = { pulled: 0, closed: false };
    async function* gen(): AsyncGenerator<string> {
      try {
        for (let i = 0; i < chunks; i++) {
          if (i === failAt) throw new Error("backend lost");
          state.pulled++;
          yield chunkText(
            format,
            Array.from({ length: 1_000 }, (_, n) => receipt({ attempts: n })),
          );
        }
      } finally {
        state.closed = true;
      }
    }
    return { state, gen };
  }

  it("pulls the next chunk only as the reader consumes: a stalled reader holds about one chunk", async () => {
    const { state, gen } = source(50);
    // A socket that takes nothing more until its first write is flushed.
    const held: (() => void)[] = [];
    let received = 0;
    const socket = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        held.push(done);
      },
    });
    const stream = exportStream(exportText("csv", gen()));
    stream.pipe(socket);
    // Backpressure engaged end to end: the socket wants a drain and the export's own buffer is full.
    await waitUntil(
      "the export to stop pulling",
      () => socket.writableNeedDrain && stream.readableLength >= stream.readableHighWaterMark,
      5_000,
      1,
    );
    expect(state.pulled).toBeLessThanOrEqual(2);
    // Nothing more is pulled while the socket holds its writes.
    await tick();
    expect(state.pulled).toBeLessThanOrEqual(2);
    // The socket drains: everything follows, and the source is closed at the end.
    const finished = new Promise((resolve) => socket.on("finish", resolve));
    const drain = setInterval(() => {
      for (const done of held.splice(0)) done();
    }, 1);
    await finished;
    clearInterval(drain);
    expect(state.pulled).toBe(50);
    expect(state.closed).toBe(true);
    expect(received).toBe(Buffer.byteLength(await text(exportText("csv", source(50).gen()))));
  });

  it("errors after what was sent when the source fails part-way", async () => {
    const { state, gen } = source(5, 2, "ndjson");
    const stream = exportStream(exportText("ndjson", gen()));
    let received = "";
    await expect(
      (async () => {
        for await (const piece of stream) received += piece.toString();
      })(),
    ).rejects.toThrow("backend lost");
    expect(received.split("\n")).toHaveLength(2 * 1_000 + 1);
    expect(state.closed).toBe(true);
  });

  it("closes the source when the reader goes away", async () => {
    const { state, gen } = source(50);
    const stream = exportStream(exportText("csv", gen()));
    await new Promise((resolve) => stream.once("data", resolve));
    stream.destroy();
    for (let i = 0; i < 20 && !state.closed; i++) await tick();
    expect(state.closed).toBe(true);
    expect(state.pulled).toBeLessThan(50);
  });
});

describe("startedIterable", () => {
  it("answers the whole sequence once the first item is in", async () => {
    const started = await startedIterable(from([1, 2, 3]));
    const out: number[] = [];
    for await (const n of started) out.push(n);
    expect(out).toEqual([1, 2, 3]);
    const empty = await startedIterable(from<number>([]));
    expect((await empty.next()).done).toBe(true);
  });

  it("rejects, with the source closed, when the first item fails", async () => {
    let closed = false;
    async function* failing(): AsyncGenerator<number> {
      try {
        await Promise.reject(new Error("unavailable"));
        yield 1;
      } finally {
        closed = true;
      }
    }
    await expect(startedIterable(failing())).rejects.toThrow("unavailable");
    expect(closed).toBe(true);
  });
});
