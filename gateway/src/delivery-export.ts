import { Readable } from "node:stream";
import type { DeliveryJson } from "./delivery-views.js";

/**
 * GET /v1/campaigns/{id}/deliveries/export as text: CSV (RFC 4180, a header row, CRLF) or
 * NDJSON (one receipt per line, the list route's item shape). The text is produced chunk
 * by chunk as the reply stream asks for it, so an export of any size holds one chunk of
 * receipts (at most 1,000) in memory at a time.
 */

export type ExportFormat = "csv" | "ndjson";

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  ndjson: "application/x-ndjson",
};

/** The CSV columns, in order: the fields of a receipt of the list route. */
export const CSV_COLUMNS = ["device_id", "external_id", "platform", "outcome", "reason", "attempts", "at"] as const;

/**
 * What makes a spreadsheet read a cell as a formula (CSV injection): a leading =, +, - or
 * @, and the tab and carriage return that some programs skip before looking.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Text that came from users (external ids, provider reasons): a `'` first keeps it text in spreadsheets. */
export const spreadsheetSafe = (text: string | null): string | null =>
  text !== null && FORMULA_START.test(text) ? `'${text}` : text;

/** One field per RFC 4180: quoted (quotes doubled) when it holds a quote, comma, CR or LF; null is empty. */
export function csvField(value: string | number | null): string {
  if (value === null) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const CSV_HEADER = `${CSV_COLUMNS.join(",")}\r\n`;

/**
 * One CSV row. Only the external id and the reason can hold a comma, quote or line break
 * (or a formula): the other cells are a UUID, words, a number and an ISO time, written as
 * they are (one string per row, no array of cells: an export writes a million rows).
 */
export function csvRow(d: DeliveryJson): string {
  return `${d.device_id},${csvField(spreadsheetSafe(d.external_id))},${d.platform ?? ""},${d.outcome},${csvField(spreadsheetSafe(d.reason))},${d.attempts},${d.at}\r\n`;
}

export const ndjsonLine = (d: DeliveryJson): string => `${JSON.stringify(d)}\n`;

/** A chunk of receipts as the export's text: CSV rows or NDJSON lines. */
export function chunkText(format: ExportFormat, receipts: Iterable<DeliveryJson>): string {
  const line = format === "csv" ? csvRow : ndjsonLine;
  let text = "";
  for (const receipt of receipts) text += line(receipt);
  return text;
}

/** The export's text: the CSV header, then each chunk's text (chunkText). */
export async function* exportText(format: ExportFormat, texts: AsyncIterable<string>): AsyncGenerator<string> {
  if (format === "csv") yield CSV_HEADER;
  for await (const text of texts) if (text !== "") yield text;
}

/** Bytes the reply stream buffers before it stops asking for the next chunk. */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * The text as a byte stream for reply.send(): the next piece is pulled only when the
 * buffer is below its mark (the socket took the previous ones). When the stream is
 * destroyed (the client went away) the generator is returned, which ends the RPC.
 * An error of the source errors the stream: fastify then destroys the response, so the
 * client sees a cut-off body (no final chunk), never what looks like a complete file.
 */
export const exportStream = (text: AsyncIterable<string>): Readable =>
  Readable.from(text, { objectMode: false, highWaterMark: HIGH_WATER_MARK });

/**
 * The first item of `source` awaited now, then the rest as one iterable: a failure before
 * anything is sent becomes the route's ordinary error answer instead of a cut-off body.
 */
export async function startedIterable<T>(source: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await source.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* source;
  })();
}
