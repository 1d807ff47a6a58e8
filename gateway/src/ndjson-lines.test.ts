import { describe, expect, it } from "vitest";
import { ndjsonLines } from "./ndjson-lines.js";

async function collect(chunks: string[], max = 16) {
  async function* source() {
    for (const c of chunks) yield Buffer.from(c);
  }
  const out = [];
  for await (const line of ndjsonLines(source(), max)) out.push(line);
  return out;
}

describe("ndjsonLines", () => {
  it("splits across chunk boundaries, numbers lines from 1 and skips empty ones", async () => {
    expect(await collect(['{"a"', ':1}\n\n{"b":2}\r\n', '{"c":3}'])).toEqual([
      { number: 1, text: '{"a":1}' },
      { number: 3, text: '{"b":2}' },
      { number: 4, text: '{"c":3}' },
    ]);
  });

  it("reports a line over the limit as too long without keeping it, then goes on", async () => {
    expect(await collect(["x".repeat(10), "y".repeat(10), "\nok\n", "z".repeat(40)], 16)).toEqual([
      { number: 1, tooLong: true },
      { number: 2, text: "ok" },
      { number: 3, tooLong: true },
    ]);
  });

  it("keeps multi-byte characters split between chunks whole", async () => {
    const bytes = Buffer.from('{"n":"Zoë"}\n');
    async function* source() {
      yield bytes.subarray(0, 9);
      yield bytes.subarray(9);
    }
    const out = [];
    for await (const l of ndjsonLines(source(), 64)) out.push(l);
    expect(out).toEqual([{ number: 1, text: '{"n":"Zoë"}' }]);
  });
});
