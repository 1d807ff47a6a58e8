import { createHash } from "node:crypto";

/** A strong entity tag (RFC 9110 §8.8.3) over a JSON body: its SHA-256, base64url. */
export function strongEtag(body: unknown): string {
  return `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url")}"`;
}

/**
 * Whether If-None-Match names the current representation: "*" or any listed tag that
 * matches `etag` by weak comparison, as RFC 9110 §13.1.2 prescribes for this header.
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);
  return header
    .split(",")
    .map((t) => t.trim())
    .some((t) => t === "*" || opaque(t) === opaque(etag));
}
