import fc from "fast-check";

// A small JSON Schema → fast-check converter, written here rather than taken from npm:
// the one package that does this (json-schema-fast-check) is a 0.0.x release built on
// fast-check 1 and faker 4, and knows neither OpenAPI 3.1 nor the keywords the gateway's
// schemas use (propertyNames, discriminated oneOf, formats with patterns). This one
// covers exactly what the gateway's OpenAPI document holds and no more; an unknown
// keyword is ignored, which makes values only less valid, never a crash.

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: { pattern?: string; not?: { enum?: unknown[] } };
  minProperties?: number;
  maxProperties?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  default?: unknown;
}

export interface SchemaArbitraryOptions {
  /** Resolves a `$ref` (e.g. `#/components/schemas/App`). */
  resolve(ref: string): JsonSchema;
  /** A value for a property by its name (real ids, real keys), in place of the schema's own. */
  hint?(name: string, schema: JsonSchema): fc.Arbitrary<unknown> | undefined;
  /**
   * Besides valid values, values at and just past each limit (lengths, bounds, item
   * counts, enums), now and then: "valid-ish" input.
   */
  edges?: boolean;
}

const MAX_DEPTH = 8;
/** Strings longer than this come from the edges only: valid values stay cheap to send. */
const TYPICAL_LENGTH = 24;

/** Values for `schema`; valid ones unless `edges` asks for boundary values too. */
export function schemaArbitrary(schema: JsonSchema, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  return convert(schema, opts, 0);
}

function convert(schema: JsonSchema, opts: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  if (depth > MAX_DEPTH) return fc.constant(null);
  if (schema.$ref) return convert(opts.resolve(schema.$ref), opts, depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return withEdges(fc.constantFrom(...schema.enum), enumEdges(schema.enum), opts);
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) return fc.oneof(...branches.map((b) => convert(b, opts, depth + 1)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => convert({ ...schema, type }, opts, depth)));
  switch (types[0]) {
    case "string":
      return stringArbitrary(schema, opts);
    case "integer":
    case "number":
      return numberArbitrary(schema, types[0] === "integer", opts);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return arrayArbitrary(schema, opts, depth);
    case "object":
      return objectArbitrary(schema, opts, depth);
    default:
      // No type: any JSON (the schema's other keywords, if any, were not ours to honour).
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function withEdges<T>(valid: fc.Arbitrary<T>, edges: unknown[], opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  if (!opts.edges || edges.length === 0) return valid;
  return fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: fc.constantFrom(...edges), weight: 1 });
}

const enumEdges = (values: unknown[]): unknown[] =>
  values.flatMap((v) => (typeof v === "string" ? [v.toUpperCase(), ` ${v}`, `${v}\u0000`, ""] : [String(v)]));

function stringArbitrary(schema: JsonSchema, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 10_000, 100_000);
  const typicalMax = Math.min(max, min + TYPICAL_LENGTH);
  let valid: fc.Arbitrary<string>;
  if (schema.format === "uuid") valid = fc.uuid();
  else if (schema.format === "date-time") valid = dateTime();
  else if (schema.format === "email") valid = fc.emailAddress().filter((e) => e.length <= max);
  else if (schema.format === "uri") valid = httpsUrl().filter((u) => u.length <= max);
  else if (schema.pattern) valid = matching(schema.pattern, min, typicalMax);
  else
    valid = fc.oneof(
      fc.string({ minLength: min, maxLength: typicalMax, unit: "grapheme-ascii" }),
      fc.string({ minLength: min, maxLength: typicalMax, unit: "grapheme" }),
    );
  const edges = [
    "a".repeat(max),
    "a".repeat(max + 1),
    "é".repeat(max),
    "\u{1D54F}".repeat(max),
    ...(min > 0 ? ["a".repeat(min - 1)] : []),
    ...(FORMAT_EDGES[schema.format ?? ""] ?? []),
  ];
  return withEdges(valid, edges, opts);
}

/** Values at the edges of what a format allows: leap seconds, year 0, extreme offsets, odd hosts and ports. */
const FORMAT_EDGES: Record<string, string[]> = {
  "date-time": [
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999Z",
    "2016-12-31T23:59:60Z",
    "2030-06-30T23:59:60+00:00",
    "2030-01-01T00:00:00+23:59",
    "2030-01-01T00:00:00-23:59",
    "2030-01-01T00:00:00.123456789Z",
    "2030-01-01t00:00:00z",
    "2030-02-29T00:00:00Z",
    "2028-02-29T12:00:00Z",
    "1969-12-31T23:59:59.999Z",
  ],
  uri: [
    "https://[::1]/a.png",
    "https://127.0.0.1:99999/a.png",
    "https://user:pass@example.com/a.png",
    "https://xn--e1afmkfd.xn--p1ai/a.png",
    "https://example.com/%zz",
    "https://example.com/\u00e9",
    "https:example.com",
    "http://example.com/a.png",
    "javascript:alert(1)",
  ],
  email: ["a@b", '"a b"@example.com', "a@[127.0.0.1]", "a@example.com\u0000", `${"a".repeat(64)}@example.com`],
  uuid: [
    "00000000-0000-0000-0000-000000000000",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    "{7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11}",
  ],
};

/** Strings matching `pattern` of a typical length; the pattern itself says what is valid. */
function matching(pattern: string, min: number, max: number): fc.Arbitrary<string> {
  const re = new RegExp(pattern, "u");
  return fc
    .stringMatching(re, { size: "small" })
    .filter((s) => s.length >= min && s.length <= Math.max(max, min + 256) && re.test(s));
}

/** Any time from 1970 to 2100 half the time, the coming year otherwise (what scheduling accepts). */
function dateTime(): fc.Arbitrary<string> {
  const now = Date.now();
  return fc
    .oneof(
      fc.date({ min: new Date(0), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }),
      fc.integer({ min: 60_000, max: 360 * 24 * 3600_000 }).map((ms) => new Date(now + ms)),
    )
    .map((d) => d.toISOString());
}

function httpsUrl(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.domain(), fc.webSegment(), fc.constantFrom("", "?a=1", "#x"))
    .map(([host, segment, tail]) => `https://${host}/${segment}${tail}`);
}

function numberArbitrary(schema: JsonSchema, integer: boolean, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const min = schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 1_000_000;
  const valid = integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return withEdges(valid, [min, max, min - 1, max + 1, 0, -1, 1.5, 2 ** 31, 2 ** 53], opts);
}

function arrayArbitrary(schema: JsonSchema, opts: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  const items = schema.items ? convert(schema.items, opts, depth + 1) : fc.jsonValue({ maxDepth: 1 });
  const minLength = schema.minItems ?? 0;
  const maxLength = Math.min(schema.maxItems ?? 8, minLength + 4);
  const valid = schema.uniqueItems
    ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
    : fc.array(items, { minLength, maxLength });
  if (!opts.edges || schema.maxItems === undefined) return valid;
  const tooMany = fc.array(items, { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 1 });
  return fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: tooMany, weight: 1 });
}

function objectArbitrary(schema: JsonSchema, opts: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const extra = schema.additionalProperties;
  if (names.length === 0) {
    // A map (contents per language, tags) or free JSON (data, a service account).
    const value = typeof extra === "object" ? convert(extra, opts, depth + 1) : fc.jsonValue({ maxDepth: 2 });
    const minKeys = schema.minProperties ?? 0;
    const maxKeys = Math.max(minKeys, Math.min(schema.maxProperties ?? 4, minKeys + 3));
    return fc.dictionary(mapKeys(schema), value, { minKeys, maxKeys });
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names)
    model[name] = opts.hint?.(name, properties[name]!) ?? convert(properties[name]!, opts, depth + 1);
  const requiredKeys = (schema.required ?? []).filter((k) => k in model);
  const record = fc.record(model, { requiredKeys });
  const minProperties = schema.minProperties ?? 0;
  return minProperties > 0 ? record.filter((o) => Object.keys(o).length >= minProperties) : record;
}

/** Keys of a map: the language codes the API knows best, else what propertyNames allows. */
function mapKeys(schema: JsonSchema): fc.Arbitrary<string> {
  const pattern = schema.propertyNames?.pattern;
  const refused = new Set(schema.propertyNames?.not?.enum ?? []);
  const keys = pattern
    ? fc.oneof(fc.constantFrom("en", "de", "fr"), matching(pattern, 0, 32))
    : fc.oneof(fc.constantFrom("en", "action_url", "a"), fc.string({ maxLength: 12 }));
  return refused.size > 0 ? keys.filter((k) => !refused.has(k)) : keys;
}
