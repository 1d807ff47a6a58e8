import fc from "fast-check";
import { describe, HOSTILE_STRINGS } from "../../test/support/hostile-json.js";
import { schemaArbitrary } from "../../test/support/json-schema-arbitrary.js";
import type { FuzzOperation, FuzzParam } from "./fuzz-oracle.js";
import {
  fillPath,
  fixtureFor,
  type FuzzContext,
  type FuzzTarget,
  type Part,
  pathParams,
  withoutLoneSurrogates,
} from "./fuzz-parts.js";

/**
 * The URLs of fuzzed requests: path ids real, random, malformed, over-long or badly
 * percent-encoded; query strings with paging at and past its bounds, repeated and
 * unknown parameters and percent-encoding garbage. Each knows whether the document's
 * schema makes the request one that must be refused.
 */

/**
 * Path ids that name nothing or cannot be ids at all, as they appear in the URL. No dot
 * segments (`..`, `%2e%2e`): inject() resolves them as a URL parser does, so the gateway
 * would see another path, not the id.
 */
const HOSTILE_IDS: readonly string[] = [
  "%2F",
  "a%2Fb",
  "%00",
  "%ZZ",
  "%",
  "%E2%80%AE",
  "%ED%A0%80",
  "%C0%AF",
  "null",
  "undefined",
  "0",
  "-1",
  "1e400",
  "*",
  "%20",
  ";x=1",
  "a".repeat(37),
  "a".repeat(101),
  "a".repeat(5_000),
  "a".repeat(16_384),
  "a".repeat(16_385),
  "a".repeat(40_000),
  ...HOSTILE_STRINGS.filter((s) => s !== "").map((s) => encodeURIComponent(withoutLoneSurrogates(s))),
];

/** The value fastify hands the route for a raw path segment (undefined: the URL is malformed). */
function decodedSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The path with real ids mostly, random UUIDs and hostile ids sometimes. A DELETE never
 * aims at the real resource it would delete (its last id): one deleted app would turn
 * the rest of the run into 404s. Refused DELETEs aim at real ones (refusedRequest).
 */
export function anyPath(
  ctx: FuzzContext,
  op: FuzzOperation,
  target: FuzzTarget,
): fc.Arbitrary<{ path: string } & Part> {
  const params = pathParams(op);
  const values = params.map((p, i) => {
    const deleted = op.method === "DELETE" && i === params.length - 1;
    const fixture = deleted ? undefined : fixtureFor(op, p.name, target);
    return fc.oneof(
      { weight: 6, arbitrary: fixture ? fc.constant(fixture) : fc.uuid() },
      { weight: 1, arbitrary: fc.uuid() },
      { weight: 1, arbitrary: fc.constant((fixture ?? "x").toUpperCase()) },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_IDS) },
    );
  });
  return fc.tuple(...values).map((chosen) => {
    const byName = Object.fromEntries(params.map((p, i) => [p.name, chosen[i]!]));
    const refusals = params.flatMap((p) => pathRefusal(ctx, p, byName[p.name]!));
    return {
      path: fillPath(op, byName),
      refusals,
      notes: params.map((p) => `{${p.name}}=${describe(byName[p.name])}`),
    };
  });
}

function pathRefusal(ctx: FuzzContext, param: FuzzParam, raw: string): string[] {
  // An empty segment or one with a slash may land on another route: nothing is certain.
  if (raw === "" || /%2f/i.test(raw) || raw.includes("/")) return [];
  const decoded = decodedSegment(raw);
  if (decoded === undefined) return [`{${param.name}} is not valid percent-encoding`];
  return ctx.oracle.textValid(param.schema, decoded) ? [] : [`{${param.name}} breaks its schema`];
}

/** The path with real ids, one of them replaced by one its schema refuses. */
export function refusedPath(
  ctx: FuzzContext,
  op: FuzzOperation,
  target: FuzzTarget,
): fc.Arbitrary<{ path: string } & Part> {
  const params = pathParams(op);
  return fc
    .tuple(fc.constantFrom(...params), fc.constantFrom(...HOSTILE_IDS))
    .map(([broken, raw]) => {
      const byName = Object.fromEntries(
        params.map((p) => [p.name, p === broken ? raw : (fixtureFor(op, p.name, target) ?? "x")]),
      );
      return {
        path: fillPath(op, byName),
        refusals: pathRefusal(ctx, broken, raw),
        notes: [`{${broken.name}}=${describe(raw)}`],
      };
    })
    .filter((p) => p.refusals.length > 0);
}

/** Values for paging and other numbers: the documented range's edges and what is no number. */
const PAGING_VALUES: readonly string[] = [
  "0",
  "1",
  "200",
  "201",
  "-1",
  "1.5",
  "1e400",
  "",
  "Infinity",
  "NaN",
  "abc",
  "1e2",
  " 1",
  "0x10",
  "+1",
  "01",
  "1000000",
  "1000001",
  "9007199254740993",
];

/** Query-string pieces that are not well-formed `name=value` pairs, or names no operation knows. */
const QUERY_GARBAGE: readonly string[] = [
  "%",
  "%zz",
  "&&",
  "=",
  "==x",
  "a=%00",
  "a=%ED%A0%80",
  "a=%C0%AF",
  "a=%FF%FE",
  "a[b]=1",
  "a[]=1",
  "__proto__=x",
  "__proto__[x]=1",
  "constructor[prototype][x]=1",
  "foo=bar",
  ";a=1",
  "a=1;b=2",
  `long=${"x".repeat(10_000)}`,
];

interface QueryValue {
  /** Encoded as it goes into the URL. */
  raw: string[];
  /** What the route sees, when that is certain. */
  decoded?: string | string[];
}

function queryValue(ctx: FuzzContext, param: FuzzParam): fc.Arbitrary<QueryValue> {
  const plain = (values: string[]): QueryValue => ({
    raw: values.map(encodeURIComponent),
    decoded: values.length === 1 ? values[0]! : values,
  });
  const valid = schemaArbitrary(param.schema, { resolve: ctx.resolve }).map((v) => plain([String(v)]));
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 3, arbitrary: fc.constantFrom(...PAGING_VALUES).map((v) => plain([v])) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((v) => plain([withoutLoneSurrogates(v)])),
    },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...PAGING_VALUES), { minLength: 2, maxLength: 3 }).map(plain) },
    { weight: 1, arbitrary: fc.constantFrom("%", "%zz", "%ED%A0%80", "%00").map((raw) => ({ raw: [raw] })) },
  );
}

function queryRefusals(ctx: FuzzContext, param: FuzzParam, value: QueryValue): string[] {
  if (value.decoded === undefined) return [];
  return ctx.oracle.textValid(param.schema, value.decoded) ? [] : [`query ${param.name} breaks its schema`];
}

/** A query string from the operation's parameters (any values), unknown ones and garbage. */
export function anyQuery(
  ctx: FuzzContext,
  op: FuzzOperation,
  target: FuzzTarget,
): fc.Arbitrary<{ query: string } & Part> {
  const params = op.params.filter((p) => p.in === "query");
  const known = params.map((p) =>
    fc.option(
      p.name === "app_id"
        ? fc.oneof(
            {
              weight: 4,
              arbitrary: fc.constant<QueryValue>({ raw: [target.fixtures.app_id!], decoded: target.fixtures.app_id! }),
            },
            { weight: 1, arbitrary: queryValue(ctx, p) },
          )
        : queryValue(ctx, p),
      { nil: undefined, freq: 2 },
    ),
  );
  return fc
    .tuple(fc.tuple(...known), fc.array(fc.constantFrom(...QUERY_GARBAGE), { maxLength: 2 }))
    .map(([values, garbage]) => {
      const pairs: string[] = [];
      const refusals: string[] = [];
      params.forEach((p, i) => {
        const v = values[i];
        if (!v) return;
        for (const raw of v.raw) pairs.push(`${p.name}=${raw}`);
        refusals.push(...queryRefusals(ctx, p, v));
      });
      // A garbage piece may name a known parameter too: then nothing about it is certain.
      const clean = garbage.every((g) => !params.some((p) => g.startsWith(p.name)));
      pairs.push(...garbage);
      const query = pairs.join("&");
      return { query, refusals: clean ? refusals : [], notes: query ? [`?${describe(query)}`] : [] };
    });
}

/** A query string with real values, one known parameter given a value its schema refuses. */
export function refusedQuery(
  ctx: FuzzContext,
  op: FuzzOperation,
  target: FuzzTarget,
): fc.Arbitrary<{ query: string } & Part> {
  const params = op.params.filter((p) => p.in === "query");
  return fc
    .tuple(fc.constantFrom(...params), fc.constantFrom(...PAGING_VALUES, ...HOSTILE_STRINGS), fc.boolean())
    .map(([param, value, repeat]) => {
      const v: QueryValue = repeat
        ? { raw: [encodeURIComponent(withoutLoneSurrogates(value)), "1"], decoded: [withoutLoneSurrogates(value), "1"] }
        : { raw: [encodeURIComponent(withoutLoneSurrogates(value))], decoded: withoutLoneSurrogates(value) };
      const pairs = v.raw.map((raw) => `${param.name}=${raw}`);
      if (param.name !== "app_id" && params.some((p) => p.name === "app_id"))
        pairs.push(`app_id=${target.fixtures.app_id}`);
      return {
        query: pairs.join("&"),
        refusals: queryRefusals(ctx, param, v),
        notes: [`?${describe(pairs.join("&"))}`],
      };
    })
    .filter((q) => q.refusals.length > 0);
}
