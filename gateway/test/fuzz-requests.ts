import fc from "fast-check";
import { describe, jsonText } from "../../test/support/hostile-json.js";
import { schemaArbitrary } from "../../test/support/json-schema-arbitrary.js";
import { anyBody, bodyRefusals, ndjsonText, refusedBody, validValue } from "./fuzz-bodies.js";
import { anyHeaders, badAuthorization, goodAuthorization } from "./fuzz-credentials.js";
import type { FuzzOperation } from "./fuzz-oracle.js";
import {
  type BodyPart,
  type Credential,
  fillPath,
  fixtureFor,
  type FuzzContext,
  type FuzzRequest,
  type FuzzTarget,
  idempotencyParam,
  type Part,
  pathParams,
} from "./fuzz-parts.js";
import { anyPath, anyQuery, refusedPath, refusedQuery } from "./fuzz-urls.js";

/**
 * Requests for the REST fuzz suite, generated from the operations of the gateway's OpenAPI
 * document. Each request knows why it must be refused, if it must: its credentials are
 * missing or wrong, or a body, path id, query parameter or header breaks the document's
 * schema (judged by the SchemaOracle, not by the gateway). Two kinds:
 * - `anyRequest`: valid-ish input, mutated or hostile or not, with any credentials; it may
 *   change state.
 * - `refusedRequest`: a request that would succeed but for one thing that must get it
 *   refused, aimed at real resources, so that a gap would show as changed state.
 */

function assemble(
  op: FuzzOperation,
  path: string,
  query: string,
  parts: (Part & { payload?: string | Buffer })[],
): Omit<FuzzRequest, "remoteAddress"> {
  const headers: Record<string, string | string[]> = {};
  let payload: string | Buffer | undefined;
  for (const p of parts) {
    for (const [k, v] of Object.entries(p.headers ?? {})) {
      // A header two parts set (Authorization in the extras) is sent twice; the first counts.
      const had = headers[k];
      headers[k] = had === undefined ? v : [...[had].flat(), ...[v].flat()];
    }
    if (p.payload !== undefined) payload = p.payload;
  }
  const notes = [`${op.method} ${op.path}`, ...parts.flatMap((p) => p.notes)];
  return {
    op,
    url: query ? `${path}?${query}` : path,
    headers,
    ...(payload === undefined ? {} : { payload }),
    refusals: parts.flatMap((p) => p.refusals ?? []),
    notes,
    [fc.toStringMethod]: () => notes.join(" | "),
  };
}

/**
 * Any request to `op`: a third of them well-formed (valid-ish values that reach the
 * backends), the rest with anything mutated or hostile, with any credentials.
 */
export function anyRequest(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 1, arbitrary: wellFormedRequest(ctx, op, target) },
    { weight: 2, arbitrary: wildRequest(ctx, op, target) },
  );
}

/** Real ids, valid query values, a body of valid values (at their limits now and then), fitting credentials. */
function wellFormedRequest(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const who = fc.constantFrom<Credential>("owner", "orgKey", "appKey", ...(op.clientKey ? ["clientKey" as const] : []));
  const auth = op.isPublic ? fc.constant<Part>({ notes: ["public"] }) : goodAuthorization(op, target, who);
  const params = pathParams(op);
  const path = fc
    .tuple(
      ...params.map((p, i) =>
        op.method === "DELETE" && i === params.length - 1
          ? fc.uuid()
          : fc.constant(fixtureFor(op, p.name, target) ?? "x"),
      ),
    )
    .map((ids) => fillPath(op, Object.fromEntries(params.map((p, i) => [p.name, ids[i]!]))));
  const queryParams = op.params.filter((p) => p.in === "query");
  const query = fc
    .tuple(
      ...queryParams.map((p) =>
        p.name === "app_id"
          ? fc.constant<string | null>(target.fixtures.app_id!)
          : fc.option(schemaArbitrary(p.schema, { resolve: ctx.resolve }).map(String), { nil: null }),
      ),
    )
    .map((values) =>
      queryParams
        .flatMap((p, i) => (values[i] === null ? [] : [`${p.name}=${encodeURIComponent(values[i]!)}`]))
        .join("&"),
    );
  const body: fc.Arbitrary<BodyPart> = !op.body
    ? fc.constant({ notes: [] })
    : op.body.contentType === "application/json"
      ? validValue(ctx, op, target, true).map((v) => ({
          headers: { "content-type": "application/json" },
          payload: jsonText(v),
          notes: [`body ${describe(v)}`],
          refusals: bodyRefusals(ctx, op, jsonText(v), "application/json"),
        }))
      : ndjsonText(ctx, op, target).map((b) => ({ ...b, headers: { "content-type": op.body!.contentType } }));
  const idempotency = fc
    .option(fc.uuid(), { nil: null })
    .map(
      (key): Part =>
        key === null || !idempotencyParam(op)
          ? { notes: [] }
          : { headers: { "idempotency-key": key }, notes: [`Idempotency-Key ${key}`] },
    );
  return fromSomewhere(
    fc
      .tuple(auth, path, query, body, idempotency)
      .map(([a, p, q, b, h]) => assemble(op, p, q, [{ notes: ["well-formed"] }, a, b, h])),
  );
}

/** A request with anything mutated or hostile: credentials, ids, query, body, media type, headers. */
function wildRequest(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const who = fc.constantFrom<Credential>("owner", "orgKey", "appKey", "clientKey");
  const auth = op.isPublic
    ? fc.constant<Part>({ notes: ["public"] })
    : fc.oneof(
        { weight: 6, arbitrary: goodAuthorization(op, target, who) },
        { weight: 1, arbitrary: badAuthorization(ctx) },
      );
  const body = op.body ? anyBody(ctx, op, target) : fc.constant<BodyPart>({ notes: [] });
  return fromSomewhere(
    fc
      .tuple(auth, anyPath(ctx, op, target), anyQuery(ctx, op, target), body, anyHeaders(ctx, op))
      .map(([a, p, q, b, h]) => assemble(op, p.path, q.query, [a, p, q, b, h])),
  );
}

/** Requests from many client addresses (limits per address would otherwise answer most of them). */
function fromSomewhere(requests: fc.Arbitrary<Omit<FuzzRequest, "remoteAddress">>): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(requests, fc.ipV4()).map(([r, remoteAddress]) => ({ ...r, remoteAddress }));
}

/**
 * A request to `op` that must be refused for exactly one reason, aimed at real
 * resources with a body that would otherwise be accepted.
 */
export function refusedRequest(ctx: FuzzContext, op: FuzzOperation, target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const who = fc.constantFrom<Credential>("owner", "orgKey");
  const goodAuth = op.isPublic ? fc.constant<Part>({ notes: ["public"] }) : goodAuthorization(op, target, who);
  const realPath = fc.constant({
    path: fillPath(op, Object.fromEntries(pathParams(op).map((p) => [p.name, fixtureFor(op, p.name, target) ?? "x"]))),
    notes: [],
  });
  const appQuery = op.params.some((p) => p.in === "query" && p.name === "app_id")
    ? `app_id=${target.fixtures.app_id}`
    : "";
  const goodBody = op.body
    ? validValue(ctx, op, target, false).map(
        (v): BodyPart => ({
          headers: { "content-type": op.body!.contentType },
          payload: typeof v === "string" && op.body!.contentType !== "application/json" ? v : jsonText(v),
          notes: [`body ${describe(v)}`],
        }),
      )
    : fc.constant<BodyPart>({ notes: [] });

  const breakers: fc.Arbitrary<Omit<FuzzRequest, "remoteAddress">>[] = [];
  if (!op.isPublic) {
    breakers.push(
      fc.tuple(badAuthorization(ctx), realPath, goodBody).map(([a, p, b]) => assemble(op, p.path, appQuery, [a, b])),
    );
    if (op.clientKey !== "allowed") {
      const client = goodAuthorization(op, target, fc.constant("clientKey")).filter((a) => a.refusals!.length > 0);
      breakers.push(fc.tuple(client, realPath, goodBody).map(([a, p, b]) => assemble(op, p.path, appQuery, [a, b])));
    }
  }
  if (op.body?.contentType === "application/json")
    breakers.push(
      fc
        .tuple(goodAuth, realPath, refusedBody(ctx, op, target))
        .map(([a, p, b]) => assemble(op, p.path, appQuery, [a, b])),
    );
  if (pathParams(op).length > 0)
    breakers.push(
      fc
        .tuple(goodAuth, refusedPath(ctx, op, target), goodBody)
        .map(([a, p, b]) => assemble(op, p.path, appQuery, [a, p, b])),
    );
  if (op.params.some((p) => p.in === "query"))
    breakers.push(
      fc
        .tuple(goodAuth, realPath, refusedQuery(ctx, op, target), goodBody)
        .map(([a, p, q, b]) => assemble(op, p.path, q.query, [a, q, b])),
    );
  if (idempotencyParam(op))
    breakers.push(
      fc
        .tuple(
          goodAuth,
          realPath,
          goodBody,
          anyHeaders(ctx, op).filter((h) => h.refusals!.length > 0 && !h.headers?.authorization),
        )
        .map(([a, p, b, h]) => assemble(op, p.path, appQuery, [a, b, h])),
    );
  return fromSomewhere(fc.oneof(...breakers));
}
