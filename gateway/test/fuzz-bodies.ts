import fc from "fast-check";
import {
  describe,
  hostileValue,
  hugeString,
  INVALID_NUMBER_TOKENS,
  jsonText,
  MALFORMED_JSON,
  mutation,
} from "../../test/support/hostile-json.js";
import { schemaArbitrary } from "../../test/support/json-schema-arbitrary.js";
import type { FuzzOperation } from "./fuzz-oracle.js";
import type { BodyPart, FuzzContext, FuzzTarget, TextPart } from "./fuzz-parts.js";
import { type Operation, validBody } from "./operations.js";

/**
 * The bodies of fuzzed requests: values from the operation's schema (at their limits now
 * and then), mutated (wrong types, fields dropped or added, null everywhere), hostile
 * values, malformed or truncated JSON, bodies over the limit, NDJSON lines, under the
 * right media type or another. Each knows whether it must be refused.
 */

/** Media types that are not JSON at all: a JSON body under them must get 415 (or 400 when empty). */
const NOT_JSON = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/octet-stream",
];
/** Spellings whose handling is the gateway's choice: whatever it answers, the contract holds. */
const ODD_JSON = [
  "APPLICATION/JSON",
  "application/json; charset=utf-8",
  "application/json;",
  "application/json; charset=utf-16",
  "application/jsonx",
  "application/json, text/plain",
  "*/*",
  "application/x-ndjson",
  "",
];

/** A body for `op` (JSON or NDJSON), its media type, and whether it must be refused. */
export function anyBody(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<BodyPart> {
  const body = op.body!;
  const text = body.contentType === "application/json" ? anyJsonText(ctx, op, target) : ndjsonText(ctx, op, target);
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constant<string | undefined>(body.contentType) },
    { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 1, arbitrary: fc.constantFrom(...NOT_JSON, ...ODD_JSON, "application/json") },
  );
  return fc.tuple(text, contentType, fc.boolean(), fc.nat({ max: 40 })).map(([t, type, asBytes, lengthSkew]) => {
    const headers: Record<string, string> = {};
    if (type !== undefined) headers["content-type"] = type;
    const notes = [...t.notes, `content-type ${type === undefined ? "absent" : JSON.stringify(type)}`];
    // Now and then a Content-Length that does not match the body.
    if (lengthSkew === 0 && t.payload !== undefined) {
      headers["content-length"] = String(Buffer.byteLength(t.payload) + 7);
      notes.push("content-length too large");
    }
    const payload = t.payload !== undefined && asBytes ? Buffer.from(t.payload) : t.payload;
    return {
      headers,
      payload,
      notes,
      refusals:
        body.contentType === "application/json" && lengthSkew !== 0 ? bodyRefusals(ctx, op, t.payload, type) : [],
    };
  });
}

export function bodyRefusals(
  ctx: FuzzContext,
  op: FuzzOperation,
  payload: string | undefined,
  type: string | undefined,
): string[] {
  const empty = payload === undefined || payload.trim() === "";
  if (!empty && Buffer.byteLength(payload) > ctx.bodyLimit) return ["body over the limit"];
  if (!empty && type !== undefined && NOT_JSON.includes(type)) return [`content type ${type}`];
  if (!empty && (type === undefined || !type.startsWith("application/json"))) return [];
  if (type === "application/x-ndjson") return [];
  const verdict = ctx.oracle.bodyVerdict(op.body!.schema, empty ? undefined : payload);
  if (verdict === "valid") return [];
  // An absent body is fine where the document does not require one.
  if (empty && !op.body!.required) return [];
  return [verdict === "malformed" ? "body is not JSON" : "body breaks the schema"];
}

export function validValue(
  ctx: FuzzContext,
  op: FuzzOperation,
  target: FuzzTarget,
  edges: boolean,
): fc.Arbitrary<unknown> {
  const generated = schemaArbitrary(op.body!.schema, { resolve: ctx.resolve, hint: target.hint, edges });
  const known = validBody({ operationId: op.operationId } as Operation, target.fixtures);
  // validBody knows bodies that reach the backends; {} means it knows none for this operation.
  if (known && typeof known === "object" && Object.keys(known).length === 0) return generated;
  return fc.oneof(fc.constant(known), generated);
}

function anyJsonText(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<TextPart> {
  const valid = validValue(ctx, op, target, true);
  const asText = (value: unknown, note: string): TextPart => ({ payload: jsonText(value), notes: [note] });
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((v) => asText(v, `body ${describe(v)}`)) },
    {
      weight: 5,
      arbitrary: valid.chain((v) => mutation(v)).map((m) => asText(m.value, `body mutated: ${m.note}`)),
    },
    { weight: 1, arbitrary: hostileValue().map((v) => asText(v, `body ${describe(v)}`)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...MALFORMED_JSON).map((t) => ({ payload: t, notes: [`body ${describe(t)}`] })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.nat()).map(([v, n]) => {
        const t = jsonText(v);
        return { payload: t.slice(0, n % Math.max(1, t.length)), notes: ["body truncated"] };
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          valid.chain((v) => mutation(v)),
          fc.constantFrom(...INVALID_NUMBER_TOKENS),
        )
        .map(([m, token]) => ({
          payload: jsonText({ x: m.value }).replace(/^\{"x":/, `{"n":${token.text},"x":`),
          notes: [`body with ${token.text}`],
        })),
    },
    { weight: 1, arbitrary: overLimit(ctx) },
    { weight: 1, arbitrary: fc.constant<TextPart>({ notes: ["no body"] }) },
  );
}

/** A JSON body just over the limit, or far over it. */
function overLimit(ctx: FuzzContext): fc.Arbitrary<TextPart> {
  return fc.constantFrom(1, 1_000, ctx.bodyLimit).map((extra) => ({
    payload: JSON.stringify({ name: "x".repeat(ctx.bodyLimit + extra) }),
    notes: [`body ${ctx.bodyLimit + extra} bytes`],
  }));
}

/** NDJSON lines: valid registrations, mutated and hostile ones, blank lines, CRLF. */
export function ndjsonText(ctx: FuzzContext, _op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<TextPart> {
  const device = fc.constantFrom(
    { push_token: target.pushToken, platform: "ios" },
    { push_token: "ab".repeat(32), platform: "ios", tags: ["beta"] },
    { push_token: "fcm-token-1", platform: "android" },
  );
  const line = fc.oneof(
    { weight: 3, arbitrary: device.map((d) => jsonText(d)) },
    { weight: 3, arbitrary: device.chain((d) => mutation(d)).map((m) => jsonText(m.value)) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_JSON.filter((m) => !m.includes("\n"))) },
    { weight: 1, arbitrary: hugeString().map((s) => JSON.stringify({ push_token: s, platform: "ios" })) },
  );
  return fc
    .tuple(fc.array(line, { maxLength: 6 }), fc.constantFrom("\n", "\r\n", "\n\n"), fc.boolean())
    .map(([lines, sep, trailing]) => ({
      payload: lines.join(sep) + (trailing ? sep : ""),
      notes: [`${lines.length} NDJSON lines`],
    }))
    .chain((b) => fc.oneof({ weight: 9, arbitrary: fc.constant(b) }, { weight: 1, arbitrary: overLimit(ctx) }));
}

/** A body that must be refused: breaks the schema, does not parse, is too large or is not JSON. */
export function refusedBody(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<BodyPart> {
  const valid = validValue(ctx, op, target, false);
  const json = (payload: string | undefined, note: string, type = "application/json"): BodyPart => ({
    headers: { "content-type": type },
    ...(payload === undefined ? {} : { payload }),
    notes: [note, `content-type ${type}`],
    refusals: bodyRefusals(ctx, op, payload, type),
  });
  return fc
    .oneof(
      {
        weight: 6,
        arbitrary: valid.chain((v) => mutation(v)).map((m) => json(jsonText(m.value), `body mutated: ${m.note}`)),
      },
      { weight: 1, arbitrary: hostileValue().map((v) => json(jsonText(v), `body ${describe(v)}`)) },
      { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((t) => json(t, `body ${describe(t)}`)) },
      { weight: 1, arbitrary: overLimit(ctx).map((b) => json(b.payload as string, b.notes[0]!)) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(valid, fc.constantFrom(...NOT_JSON))
          .map(([v, type]) => json(jsonText(v), `body ${describe(v)}`, type)),
      },
    )
    .filter((b) => b.refusals!.length > 0);
}
