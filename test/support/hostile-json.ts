import fc from "fast-check";

/**
 * JSON that a careful client would never send, for the fuzz suites: strings with NUL,
 * lone surrogates, bidi and control characters, huge strings, numbers at and past the
 * edges of doubles, nesting 10,000 deep, malformed text; and mutations of valid bodies
 * (a value replaced, a field dropped, a field added, null everywhere, numbers as text).
 */

/** JSON text written verbatim: what JSON.stringify cannot write (1e400, -0, 2^53+1, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text.length > 60 ? `${this.text.slice(0, 60)}…(${this.text.length} chars)` : this.text;
  }
}

/** The JSON text of a value that may hold RawJson parts (keys such as __proto__ stay own keys). */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export const nest = (depth: number, open: string, inner: string, close: string): RawJson =>
  new RawJson(open.repeat(depth) + inner + close.repeat(depth));

/** Strings no field expects: control and format characters, lone surrogates, injections, near-numbers. */
export const HOSTILE_STRINGS: readonly string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff",
  "x\udc00y\ud83d",
  "\u202eevil\u202c.exe",
  "\u200f\u200e\u2066\u2069",
  "\u0001\u0002\u001b[31mred",
  "\u007f\u0085\u2028\u2029",
  "\r\n\r\nX-Injected: 1",
  "\t\v\f",
  "\ufeffbom",
  "\uffff\ufffe",
  "\u{1D573}\u{1D58A}\u{1D597}",
  "e\u0301\u0301\u0301\u0301",
  "<script>alert(1)</script>",
  "'; DROP TABLE apps; --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j-style lookup, sent as text on purpose
  "${jndi:ldap://x/a}",
  "%s%n%x%00",
  "../../../../etc/passwd",
  "null",
  "NaN",
  "Infinity",
  "-0",
  "1e400",
  "0x1F",
  " 1",
  "\u0661\u0662",
  "true",
  "{}",
];

/** Long strings of one unit, at sizes around the limits (256, 2,048, 8,192, 64 KiB) and past them. */
export function hugeString(): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom("x", "é", "\u{1D54F}", "\u0000", "\ud800", "\u202e", "%"),
      fc.constantFrom(256, 257, 2_049, 8_193, 65_537, 200_000),
    )
    .map(([unit, n]) => unit.repeat(n));
}

/** Numbers past what the schemas allow, and number tokens JSON.stringify cannot produce. */
export const HOSTILE_NUMBERS: readonly unknown[] = [
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  5e-324,
  2 ** 31,
  2 ** 32,
  -(2 ** 31) - 1,
  Number.MAX_SAFE_INTEGER,
  new RawJson("-0"),
  new RawJson("1e400"),
  new RawJson("-1e400"),
  new RawJson("1e-400"),
  new RawJson("9007199254740993"),
  new RawJson("100000000000000000000000000000000"),
  new RawJson("1E2"),
  new RawJson("0.0000000000000000000000000000001"),
];

/** Number tokens that are not JSON at all: the body cannot parse. */
export const INVALID_NUMBER_TOKENS: readonly RawJson[] = [
  "NaN",
  "Infinity",
  "-Infinity",
  "+1",
  "01",
  ".5",
  "1.",
  "0x10",
].map((t) => new RawJson(t));

/**
 * Nesting 10,000 deep, and around the 64 levels the gateway's input rules walk, with a
 * NUL or a number that is not finite at the bottom now and then.
 */
export function deepJson(): fc.Arbitrary<RawJson> {
  return fc
    .tuple(
      fc.constantFrom(63, 64, 65, 100, 1_000, 10_000),
      fc.boolean(),
      fc.constantFrom("null", '"\\u0000"', "1e400", '"x"'),
    )
    .map(([depth, arrays, inner]) =>
      arrays ? nest(depth, "[", inner === "null" ? "" : inner, "]") : nest(depth, '{"a":', inner, "}"),
    );
}

/** Any one hostile value: wrong type for nearly every field. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...HOSTILE_STRINGS), weight: 4 },
    { arbitrary: hugeString(), weight: 1 },
    { arbitrary: fc.constantFrom(...HOSTILE_NUMBERS), weight: 3 },
    { arbitrary: deepJson(), weight: 2 },
    {
      arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { "": null }, [[[]]], ["a", 1, null]),
      weight: 3,
    },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  );
}

/** Keys no schema has, some of them dangerous to naive parsers. */
export function extraKey(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom("__proto__", "constructor", "prototype", "", " ", "a\u0000", "\ud800", "$where", "x".repeat(1_000)),
    fc.string({ minLength: 1, maxLength: 12 }),
  );
}

/** Bodies that are not JSON: broken syntax, wrong tokens, trailing garbage, a byte-order mark. */
export const MALFORMED_JSON: readonly string[] = [
  "{",
  "}",
  "[",
  '{"a"',
  '{"a":}',
  '{"a":1,}',
  "[1,]",
  "{'a':1}",
  "{a:1}",
  '"unterminated',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '{"a":1}}',
  "{} {}",
  "{}garbage",
  "\ufeff{}",
  "/* comment */{}",
  '{"a":NaN}',
  '{"a":undefined}',
  "null x",
  '{"a":"\u0000"}',
  '{"a":"\n"}',
  "truee",
  "\u0000",
  "{".repeat(100_000),
];

type Key = string | number;

/** Every path into a value, the root first (at most `max`, breadth first). */
export function pathsOf(value: unknown, max = 200): Key[][] {
  const out: Key[][] = [];
  const queue: { v: unknown; path: Key[] }[] = [{ v: value, path: [] }];
  while (queue.length > 0 && out.length < max) {
    const { v, path } = queue.shift()!;
    out.push(path);
    if (v instanceof RawJson || v === null || typeof v !== "object") continue;
    const entries: [Key, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (const [k, x] of entries) queue.push({ v: x, path: [...path, k] });
  }
  return out;
}

const DROP = Symbol("drop");

/** A copy of `root` with the value at `path` replaced by `value` (or dropped, for DROP). */
function setAt(root: unknown, path: Key[], value: unknown): unknown {
  if (path.length === 0) return value === DROP ? undefined : value;
  const [head, ...rest] = path;
  if (Array.isArray(root)) {
    const copy = [...root];
    if (rest.length === 0 && value === DROP) copy.splice(head as number, 1);
    else copy[head as number] = setAt(copy[head as number], rest, value);
    return copy;
  }
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(root as Record<string, unknown>)) defineOwn(copy, k, v);
  if (rest.length === 0 && value === DROP) delete copy[head as string];
  else defineOwn(copy, String(head), setAt(copy[head as string], rest, value));
  return copy;
}

/** Sets an own property, even `__proto__`, as JSON.parse would. */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mapLeaves(value: unknown, f: (leaf: unknown) => unknown): unknown {
  if (value instanceof RawJson) return f(value);
  if (Array.isArray(value)) return value.map((v) => mapLeaves(v, f));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) defineOwn(out, k, mapLeaves(v, f));
    return out;
  }
  return f(value);
}

const pointer = (path: Key[]) => `/${path.join("/")}`;

export interface Mutation {
  value: unknown;
  /** What was done, for the failure message. */
  note: string;
}

/**
 * One mutation of `base`: a value replaced by a hostile one, a field or item dropped, a
 * field added, every value null, every scalar as text, the whole body wrapped in an
 * array.
 */
export function mutation(base: unknown): fc.Arbitrary<Mutation> {
  const paths = pathsOf(base);
  const members = paths.filter((p) => p.length > 0);
  const objects = paths.filter((p) => {
    const v = p.reduce<unknown>((o, k) => (o as Record<Key, unknown>)[k], base);
    return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof RawJson);
  });
  const options: fc.WeightedArbitrary<Mutation>[] = [
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...paths), hostileValue())
        .map(([path, v]) => ({ value: setAt(base, path, v), note: `${pointer(path)} := ${describe(v)}` })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ value: mapLeaves(base, () => null), note: "null everywhere" }),
    },
    {
      weight: 1,
      arbitrary: fc.constant({
        value: mapLeaves(base, (v) => (typeof v === "string" ? v : jsonText(v))),
        note: "every scalar as text",
      }),
    },
    { weight: 1, arbitrary: fc.constant({ value: [base], note: "wrapped in an array" }) },
  ];
  if (members.length > 0) {
    options.push({
      weight: 2,
      arbitrary: fc
        .constantFrom(...members)
        .map((path) => ({ value: setAt(base, path, DROP), note: `drop ${pointer(path)}` })),
    });
  }
  if (objects.length > 0) {
    options.push({
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...objects), extraKey(), hostileValue()).map(([path, key, v]) => ({
        value: setAt(base, [...path, key], v),
        note: `add ${pointer([...path, key]).slice(0, 80)} := ${describe(v)}`,
      })),
    });
  }
  return fc.oneof(...options);
}

/** A short description of a value for failure messages. */
export function describe(v: unknown): string {
  const text = v instanceof RawJson ? v.toString() : (JSON.stringify(v) ?? String(v));
  return text.length > 60 ? `${text.slice(0, 60)}…(${text.length} chars)` : text;
}
