import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import addFormatsPlugin from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";
import { DeferredCompilation } from "./deferred-compilation.js";
import { pointerSegment } from "./http-errors.js";

// ajv-formats is CommonJS with a default export; under NodeNext the callable is the module.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

const common: Options = {
  removeAdditional: false,
  useDefaults: true,
  // One error is enough to answer; collecting all of them lets crafted bodies cost more.
  allErrors: false,
  allowUnionTypes: true,
  discriminator: true,
};

/**
 * Request validators per part, as fastify documents it: bodies are JSON and must have
 * the right types (no silent "1" → 1), while query strings and path parameters are
 * text by nature, so `page=2` is coerced to an integer (and `page=two` still fails).
 * Both know the shared named schemas, so request schemas may reference them. Each
 * validator compiles on its first request (`deferred`: see deferred-compilation.ts).
 */
export function createValidatorCompiler(
  shared: readonly object[],
  deferred = new DeferredCompilation(),
): FastifySchemaCompiler<unknown> {
  const body = addFormats(new Ajv({ ...common, coerceTypes: false, schemas: [...shared] }));
  const text = addFormats(new Ajv({ ...common, coerceTypes: true, schemas: [...shared] }));
  return ({ schema, httpPart }) => {
    // A streamed body (NDJSON import) is validated by its route, line by line.
    if (httpPart === "body" && (schema as Record<string, unknown>)["x-ndjson-stream"] === true) return () => true;
    const part = httpPart === "headers" ? lowerCaseHeaderNames(schema as HeaderSchema) : schema;
    return deferred.defer(() => withInputRules((httpPart === "body" ? body : text).compile(part as object)));
  };
}

interface HeaderSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}

/**
 * Request headers arrive with lower-case names. Fastify lower-cases a header schema's
 * names only for its own validator, not for a custom one like this: without this, a
 * schema naming `Idempotency-Key` would never see the header it describes.
 */
function lowerCaseHeaderNames(schema: HeaderSchema): HeaderSchema {
  return {
    ...schema,
    ...(schema.properties && {
      properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k.toLowerCase(), v])),
    }),
    ...(schema.required && { required: schema.required.map((k) => k.toLowerCase()) }),
  };
}

type Validate = ValidateFunction & { errors?: ErrorObject[] | null };

/**
 * Rules every request part obeys beyond its schema: no NUL character in any string
 * (PostgreSQL text cannot hold one; a 400 here, not a 500 deep down), and no number
 * that is not finite — "1e400" coerces to Infinity, which JSON Schema's integer and
 * maximum checks let through.
 */
export function withInputRules(validate: Validate): Validate {
  const checked = ((data: unknown) => {
    if (!validate(data)) {
      checked.errors = validate.errors;
      return false;
    }
    const bad = findBadValue(data);
    checked.errors = bad ? [violation(pointerOf(bad.keys), bad.message)] : null;
    return bad === undefined;
  }) as Validate;
  return checked;
}

/** A rule broken, with the keys from the bad value up to the root (innermost first). */
interface BadValue {
  message: string;
  keys: string[];
}

/**
 * The first value that breaks a rule. Every request body passes through here, so a value's
 * path is built only once one is found, on the way back up, not for every key visited.
 */
function findBadValue(value: unknown, depth = 0): BadValue | undefined {
  if (typeof value === "string") {
    return value.includes("\u0000") ? { message: "must not contain NUL characters", keys: [] } : undefined;
  }
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : { message: "must be a finite number", keys: [] };
  }
  if (value === null || typeof value !== "object" || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findBadValue(value[i], depth + 1);
      if (bad) return within(bad, String(i));
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.includes("\u0000")) return { message: "must not have a key with a NUL character", keys: [] };
    const bad = findBadValue((value as Record<string, unknown>)[key], depth + 1);
    if (bad) return within(bad, key);
  }
  return undefined;
}

function within(bad: BadValue, key: string): BadValue {
  bad.keys.push(key);
  return bad;
}

/** The JSON pointer (RFC 6901) of a value from its keys, innermost first. */
const pointerOf = (keys: string[]): string => keys.reduceRight((at, key) => `${at}/${pointerSegment(key)}`, "");

const violation = (instancePath: string, message: string): ErrorObject => ({
  keyword: "input",
  instancePath,
  schemaPath: "#",
  params: {},
  message,
});
