import fc from "fast-check";
import type { JsonSchema } from "../../test/support/json-schema-arbitrary.js";
import type { FuzzOperation, FuzzParam, SchemaOracle } from "./fuzz-oracle.js";

/**
 * What the request generators of the REST fuzz suite share (fuzz-credentials.ts,
 * fuzz-urls.ts, fuzz-bodies.ts, composed by fuzz-requests.ts): the resources a request
 * aims at, the oracle, and the part of a request each generator adds.
 */

export type Credential = "owner" | "orgKey" | "appKey" | "clientKey";

export interface FuzzTarget {
  /** The owner's session and the org key, and an app key and a client key of this target's app. */
  credentials: Record<Credential, string>;
  /** Ids by path parameter name (`{id}` by its collection: devices, segments, campaigns). */
  fixtures: Record<string, string>;
  /** The push token fixtures.devices was registered with (a client key proves it). */
  pushToken: string;
  /** Real ids and keys for body properties, by name. */
  hint(name: string, schema: JsonSchema): fc.Arbitrary<unknown> | undefined;
}

export interface FuzzContext {
  oracle: SchemaOracle;
  resolve(ref: string): JsonSchema;
  /** A well-formed API key that names nothing, and one that was revoked. */
  unknownKey: string;
  revokedKey: string;
  bodyLimit: number;
}

export interface FuzzRequest {
  op: FuzzOperation;
  /** The client's address: limits that count per address (invitations, client keys) see many clients. */
  remoteAddress: string;
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string | Buffer;
  /** Why it must be refused; empty when it may succeed. */
  refusals: string[];
  /** What was generated, for the failure message. */
  notes: string[];
  /** fast-check prints counterexamples with this: the notes, not the schemas. */
  [fc.toStringMethod]: () => string;
}

export const PUSH_TOKEN_HEADER = "x-herald-push-token";

/** A request part: headers or text it adds, why it must be refused, what it is. */
export interface Part {
  headers?: Record<string, string | string[]>;
  refusals?: string[];
  notes: string[];
}

export interface BodyPart extends Part {
  payload?: string | Buffer;
}

/** A body before it is sent, as text. */
export interface TextPart extends Part {
  payload?: string;
}

/** The operation's path parameters, in path order. */
export function pathParams(op: FuzzOperation): FuzzParam[] {
  return op.params.filter((p) => p.in === "path");
}

/** The real resource a path parameter can name (`{id}` by the collection it is in). */
export function fixtureFor(op: FuzzOperation, name: string, target: FuzzTarget): string | undefined {
  return target.fixtures[name === "id" ? op.path.split("/")[2]! : name];
}

/** The operation's path with `values` for its parameters, as they go into the URL. */
export function fillPath(op: FuzzOperation, values: Record<string, string>): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!);
}

/** The operation's Idempotency-Key header parameter, if it has one (the sends). */
export function idempotencyParam(op: FuzzOperation): FuzzParam | undefined {
  return op.params.find((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key");
}

/**
 * The text with its lone surrogates replaced: only well-formed text can be percent-encoded
 * (as UTF-8). Lone surrogates still reach the gateway in JSON bodies, escaped.
 */
export const withoutLoneSurrogates = (s: string): string =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** Text a real HTTP/1.1 header could carry: visible ASCII, latin-1 and tabs, no CR, LF or NUL. */
export function headerText(): fc.Arbitrary<string> {
  return fc.oneof(
    fc
      .string({ maxLength: 40, unit: "binary-ascii" })
      .map((s) => [...s].filter((c) => !"\r\n\u0000".includes(c)).join("")),
    fc.constantFrom("\u00e9\u00ff\u00a0", "\t x \t", "a".repeat(8_000), "%00", "\u00c3\u00a9", '()<>@,;:\\"/[]?={}'),
  );
}
