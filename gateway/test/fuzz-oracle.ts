import { Ajv, type ValidateFunction } from "ajv";
import addFormatsPlugin from "ajv-formats";
import type { JsonSchema } from "../../test/support/json-schema-arbitrary.js";
import { MAX_JSON_DEPTH } from "../src/json-depth.js";

// ajv-formats is CommonJS with a default export; under NodeNext the callable is the module.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

/**
 * What the gateway's own OpenAPI document promises, as the REST fuzz suite checks it:
 * each operation's parameters, body and documented statuses, whether a generated input
 * breaks its schema (so it must be refused), and whether an answer keeps the contract.
 */

export interface FuzzParam {
  name: string;
  in: "path" | "query" | "header";
  schema: JsonSchema;
  required: boolean;
}

export interface FuzzOperation {
  method: string;
  /** The templated path, e.g. `/v1/apps/{app_id}`. */
  path: string;
  operationId: string;
  params: FuzzParam[];
  body?: { contentType: string; schema: JsonSchema; required: boolean };
  /** The statuses its `responses` name. */
  documented: Set<number>;
  /** `x-herald-client-key`: how a client key may call it, if at all. */
  clientKey?: "allowed" | "device-proof";
  /** Needs no credentials (`security: []`). */
  isPublic: boolean;
}

/** Statuses any /v1 operation may answer (the document's introduction describes them for all). */
export const GENERALLY_DOCUMENTED = [401, 403, 404, 413, 415, 429] as const;

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

interface OpenApiOperation {
  operationId: string;
  security?: unknown[];
  parameters?: { in: string; name: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, unknown>;
  "x-herald-client-key"?: "allowed" | "device-proof";
}

/** Every /v1 operation of the document, with what the fuzzer needs. */
export function fuzzOperations(doc: OpenApiDocument): FuzzOperation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    path.startsWith("/v1/")
      ? Object.entries(item).map(([method, op]): FuzzOperation => {
          const [contentType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
          return {
            method: method.toUpperCase(),
            path,
            operationId: op.operationId,
            params: (op.parameters ?? []).map((p) => ({
              name: p.name,
              in: p.in as FuzzParam["in"],
              schema: p.schema,
              required: p.required === true,
            })),
            ...(contentType && media
              ? { body: { contentType, schema: media.schema, required: op.requestBody?.required === true } }
              : {}),
            documented: new Set(Object.keys(op.responses).map(Number)),
            ...(op["x-herald-client-key"] ? { clientKey: op["x-herald-client-key"] } : {}),
            isPublic: Array.isArray(op.security) && op.security.length === 0,
          };
        })
      : [],
  );
}

const DOC_ID = "openapi.json";

/** `#/components/...` refs of the document, made absolute so compiled fragments find them. */
function absoluteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/")) out[k] = `${DOC_ID}${v}`;
    // ajv refuses a discriminator's `mapping` (the gateway adds it for the document only).
    else if (k === "discriminator" && v && typeof v === "object") out[k] = { propertyName: (v as any).propertyName };
    else out[k] = absoluteRefs(v);
  }
  return out;
}

export type Verdict = "malformed" | "invalid" | "valid";

/**
 * Judges generated input against the document's schemas with ajv, configured as the
 * gateway's validators are (bodies typed strictly, text coerced), plus the input rules
 * the gateway documents beyond the schemas: no NUL character anywhere, no number that
 * is not finite, no nesting deeper than the document's limit (input-rules.int.test.ts). Independent of the gateway's
 * own validation code, so that a gap there shows as a request that was not refused.
 */
export class SchemaOracle {
  private readonly body: Ajv;
  private readonly text: Ajv;
  private readonly compiled = new Map<object, ValidateFunction>();

  constructor(doc: OpenApiDocument) {
    const common = { strict: false, allErrors: false, allowUnionTypes: true, discriminator: true, useDefaults: true };
    const components = absoluteRefs({ $id: DOC_ID, components: doc.components }) as object;
    this.body = addFormats(new Ajv({ ...common, coerceTypes: false }));
    this.text = addFormats(new Ajv({ ...common, coerceTypes: true }));
    this.body.addSchema(components);
    this.text.addSchema(components);
  }

  /** A request body's text (undefined: no body). */
  bodyVerdict(schema: JsonSchema, text: string | undefined): Verdict {
    let value: unknown;
    if (text !== undefined && text.trim() !== "") {
      try {
        value = JSON.parse(text);
      } catch {
        return "malformed";
      }
    }
    return this.valid(this.body, schema, value) && !breaksInputRules(value) ? "valid" : "invalid";
  }

  /** A path, query or header value as text, or several values of a repeated query parameter. */
  textValid(schema: JsonSchema, value: string | string[]): boolean {
    // Coercion writes into arrays: validate a copy. (Bodies are parsed afresh each time.)
    const copy = Array.isArray(value) ? [...value] : value;
    return this.valid(this.text, schema, copy) && !breaksInputRules(value);
  }

  private valid(ajv: Ajv, schema: JsonSchema, value: unknown): boolean {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(absoluteRefs(schema) as object);
      this.compiled.set(schema, validate);
    }
    return validate(value) === true;
  }
}

/**
 * What the document's introduction refuses beyond the schemas: a NUL character or a
 * number that is not finite anywhere in the value, nesting deeper than MAX_JSON_DEPTH.
 */
export function breaksInputRules(value: unknown): boolean {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v === "string" && v.includes("\u0000")) return true;
    if (typeof v === "number" && !Number.isFinite(v)) return true;
    if (v !== null && typeof v === "object") {
      if (depth + 1 > MAX_JSON_DEPTH) return true;
      for (const [k, x] of Object.entries(v)) {
        if (k.includes("\u0000")) return true;
        stack.push({ v: x, depth: depth + 1 });
      }
    }
  }
  return false;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

/** What reveals internals: stack frames, source paths, module folders. */
const INTERNALS = /\n\s+at |\bat [\w$.<>]+ \(|\/work\/|node_modules|\.[cm]?[jt]s:\d+|\/src\/|\/home\/|\/root\//;
const STACK_FRAME = /\n\s+at [\w$.<>]+ \(/;
/** PEM armour of any private key. */
const PRIVATE_KEY = /PRIVATE KEY/;
/** An error answer echoes at most a short value; longer means input (or internals) was echoed whole. */
export const MAX_ERROR_BYTES = 2_048;

/**
 * Every way `answer` breaks the contract for `op` (empty: none): a status the document
 * does not name (or any 5xx), an error without the `{error, message}` JSON body, a stack
 * trace or file path, a secret. `secrets` are strings that no answer may contain.
 */
export function contractViolations(
  op: FuzzOperation,
  answer: Answer,
  secrets: readonly string[],
  opts: { mustReject: boolean },
): string[] {
  const problems: string[] = [];
  const { status, text } = answer;
  if (status >= 500) problems.push(`answered ${status}`);
  else if (!op.documented.has(status) && !(GENERALLY_DOCUMENTED as readonly number[]).includes(status))
    problems.push(`status ${status} is not documented for ${op.operationId}`);
  if (opts.mustReject && status < 400) problems.push(`a request that must be refused answered ${status}`);
  if (status >= 400) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const b = body as { error?: unknown; message?: unknown } | undefined;
    if (typeof b?.error !== "string" || typeof b.message !== "string")
      problems.push("error answer without the {error, message} JSON body");
    if (!String(answer.headers["content-type"] ?? "").startsWith("application/json"))
      problems.push(`error answer of content type ${answer.headers["content-type"]}`);
    if (Buffer.byteLength(text) > MAX_ERROR_BYTES)
      problems.push(`error answer of ${Buffer.byteLength(text)} bytes echoes too much`);
  }
  const everything = `${text}\n${JSON.stringify(answer.headers)}`;
  // A success may hold what the client stored (names, URLs); only an error must hold no internals.
  const internals = status >= 400 ? INTERNALS : STACK_FRAME;
  if (internals.test(everything)) problems.push(`answer reveals internals: ${internals.exec(everything)![0]}`);
  if (PRIVATE_KEY.test(everything)) problems.push("answer holds a private key");
  for (const secret of secrets) if (everything.includes(secret)) problems.push("answer holds a secret");
  return problems;
}
