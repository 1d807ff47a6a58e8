import http2 from "node:http2";
import fc from "fast-check";
import type { BodySpec, PeerScript, StreamAction, TokenAction } from "./h2-fuzz-peer.js";

/**
 * The scripts the fuzz peer plays (h2-fuzz-peer.ts), as fast-check arbitraries: each
 * stream's fate (an answer of any status, headers and body, cut short or not; a reset; a
 * GOAWAY; a dropped connection; silence) and the HTTP/1.1 server's answers. The bodies a
 * provider documents, valid and broken, come from its own suite.
 */

/** Retry-After values: seconds, dates, and what is neither or too large to honour. */
export const RETRY_AFTER: readonly string[] = [
  "0",
  "1",
  "2",
  "-1",
  "1.5",
  "abc",
  "",
  " 3 ",
  "1e3",
  "Infinity",
  "99999999999999999999",
  "86400",
  "Wed, 21 Oct 2015 07:28:00 GMT",
  "Fri, 31 Dec 9999 23:59:59 GMT",
  "Thu, 01 Jan 1970 00:00:00 GMT",
  "\u00e9\u00e9",
  "r".repeat(4_000),
];

/** Headers an answer may carry: Retry-After of any shape (twice, too), odd apns-id and content types, noise. */
export function answerHeaders(): fc.Arbitrary<Record<string, string | string[]>> {
  return fc
    .record(
      {
        "retry-after": fc.oneof(fc.constantFrom(...RETRY_AFTER), fc.constant(["1", "5"])),
        "apns-id": fc.oneof(fc.uuid(), fc.constantFrom("", "not-a-uuid", "i".repeat(5_000))),
        "apns-unique-id": fc.uuid(),
        "content-type": fc.constantFrom("application/json", "text/html", "application/json; charset=latin1", "x"),
        "x-noise": fc.string({ maxLength: 20, unit: "grapheme-ascii" }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
      },
      { requiredKeys: [] },
    )
    .map((h) => h as Record<string, string | string[]>);
}

/** Bodies that are not what the provider documents: garbage, truncated JSON, invalid UTF-8, huge, deep. */
export function garbageBody(valid: fc.Arbitrary<string>): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<BodySpec>({ kind: "text", text: "" }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.nat())
        .map(([text, n]): BodySpec => ({ kind: "text", text: text.slice(0, n % Math.max(1, text.length)) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("<html>502 Bad Gateway</html>", "null", "[]", '"reason"', "{}", "{{{{", "\u0000\u0000")
        .map((text): BodySpec => ({ kind: "text", text })),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map(
        (b): BodySpec => ({
          kind: "bytes",
          base64: Buffer.concat([Buffer.from([0xff, 0xfe, 0xc0]), b]).toString("base64"),
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(70_000, 1_500_000).map((bytes): BodySpec => ({ kind: "huge", bytes })),
    },
    {
      weight: 1,
      arbitrary: fc.constant<BodySpec>({ kind: "text", text: `${'{"error":'.repeat(10_000)}1${"}".repeat(10_000)}` }),
    },
  );
}

/** Statuses: mostly what providers use, sometimes anything HTTP allows. */
export function status(): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(200) },
    { weight: 6, arbitrary: fc.constantFrom(400, 401, 403, 404, 405, 410, 413, 429, 500, 502, 503) },
    { weight: 1, arbitrary: fc.integer({ min: 200, max: 599 }) },
  );
}

const STREAM_ERRORS = [
  http2.constants.NGHTTP2_NO_ERROR,
  http2.constants.NGHTTP2_PROTOCOL_ERROR,
  http2.constants.NGHTTP2_INTERNAL_ERROR,
  http2.constants.NGHTTP2_REFUSED_STREAM,
  http2.constants.NGHTTP2_CANCEL,
  http2.constants.NGHTTP2_ENHANCE_YOUR_CALM,
];

/** One stream's fate, with the provider's own (valid and broken) bodies from `bodies`. */
export function streamAction(bodies: fc.Arbitrary<string>): fc.Arbitrary<StreamAction> {
  const answer = fc.record({
    kind: fc.constant("answer" as const),
    status: status(),
    headers: answerHeaders(),
    body: fc.oneof(
      { weight: 3, arbitrary: bodies.map((text): BodySpec => ({ kind: "text", text })) },
      { weight: 2, arbitrary: garbageBody(bodies) },
    ),
    framing: fc.constantFrom(
      ...(["whole", "whole", "whole", "pieces", "reset-after-headers", "reset-mid-body", "trailers"] as const),
    ),
    delayMs: fc.oneof(
      { weight: 5, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }) },
    ),
  });
  return fc.oneof(
    { weight: 12, arbitrary: answer },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("reset" as const), code: fc.constantFrom(...STREAM_ERRORS) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("goaway" as const),
        code: fc.constantFrom(...STREAM_ERRORS),
        last: fc.constantFrom("this" as const, "before" as const, "zero" as const),
        after: fc.constantFrom("answer" as const, "close" as const, "nothing" as const),
      }),
    },
    { weight: 1, arbitrary: fc.constant<StreamAction>({ kind: "drop" }) },
    { weight: 1, arbitrary: fc.constant<StreamAction>({ kind: "silence" }) },
  );
}

/** A whole script: a stream limit, the streams' fates, the HTTP/1.1 server's answers. */
export function peerScript(bodies: fc.Arbitrary<string>, tokenBodies?: fc.Arbitrary<string>): fc.Arbitrary<PeerScript> {
  const token: fc.Arbitrary<TokenAction> = tokenBodies
    ? fc.record({
        status: fc.oneof({ weight: 3, arbitrary: fc.constant(200) }, { weight: 2, arbitrary: status() }),
        body: fc.oneof(
          { weight: 3, arbitrary: tokenBodies.map((text): BodySpec => ({ kind: "text", text })) },
          { weight: 1, arbitrary: garbageBody(tokenBodies) },
        ),
        drop: fc.nat(9).map((n) => n === 0),
      })
    : fc.constant({ status: 200, body: { kind: "text", text: "" }, drop: false });
  return fc.record({
    maxConcurrentStreams: fc.constantFrom(1, 2, 10, 100),
    streams: fc.array(streamAction(bodies), { maxLength: 40 }),
    tokens: fc.array(token, { maxLength: 8 }),
  });
}
