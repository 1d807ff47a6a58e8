/** One line of an NDJSON body: its number (from 1) and text, or why it was cut. */
export type NdjsonLine = { number: number; text: string } | { number: number; tooLong: true };

/**
 * Splits a byte stream into lines without ever holding more than `maxLineBytes` of one
 * line: a longer line is reported as too long and skipped to its end, so a body of any
 * size — or one endless line — costs bounded memory. Hand-written because readline
 * buffers a whole line, however long. Empty lines (and a final newline) yield nothing;
 * "\r\n" endings are accepted.
 */
export async function* ndjsonLines(source: AsyncIterable<Buffer>, maxLineBytes: number): AsyncGenerator<NdjsonLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let number = 0;
  const finish = function* (): Generator<NdjsonLine> {
    number++;
    if (skipping) {
      yield { number, tooLong: true };
    } else {
      const text = Buffer.concat(parts, size).toString("utf8").replace(/\r$/, "");
      if (text.trim() !== "") yield { number, text };
    }
    parts = [];
    size = 0;
    skipping = false;
  };
  for await (const chunk of source) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!skipping) {
        if (size + (end - start) > maxLineBytes) {
          skipping = true;
          parts = [];
          size = 0;
        } else if (end > start) {
          parts.push(chunk.subarray(start, end));
          size += end - start;
        }
      }
      if (nl === -1) break;
      yield* finish();
      start = nl + 1;
    }
  }
  if (size > 0 || skipping) yield* finish();
}
