import type { ProviderRequest, ProviderResponse } from "./platform.js";

export interface Body {
  bytes: Buffer;
  /** More than the limit arrived; `bytes` then holds only the first `limit + 1` bytes. */
  tooLarge: boolean;
}

/**
 * Reads a request body, keeping at most `limit + 1` bytes. The rest is read and
 * discarded rather than the stream destroyed, so the refusal can still be answered.
 */
export async function readBody(req: ProviderRequest, limit: number): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size <= limit) chunks.push(chunk);
    size += chunk.length;
  }
  const bytes = Buffer.concat(chunks);
  return size > limit ? { bytes: bytes.subarray(0, limit + 1), tooLarge: true } : { bytes, tooLarge: false };
}

/** Sends a JSON body; works for HTTP/1.1 and HTTP/2 compatibility responses alike. */
export function sendJson(
  res: ProviderResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("content-type", "application/json");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

/** A header's single value; a repeated header is `null` (callers refuse it). */
export function singleHeader(value: string | string[] | undefined): string | undefined | null {
  return Array.isArray(value) ? null : value;
}
