import { Ajv, type Options } from "ajv";
import addFormatsPlugin from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

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
 * Both know the shared named schemas, so request schemas may reference them.
 */
export function createValidatorCompiler(shared: readonly object[]): FastifySchemaCompiler<unknown> {
  const body = addFormats(new Ajv({ ...common, coerceTypes: false, schemas: [...shared] }));
  const text = addFormats(new Ajv({ ...common, coerceTypes: true, schemas: [...shared] }));
  return ({ schema, httpPart }) => {
    // A streamed body (NDJSON import) is validated by its route, line by line.
    if (httpPart === "body" && (schema as Record<string, unknown>)["x-ndjson-stream"] === true) return () => true;
    return (httpPart === "body" ? body : text).compile(schema as object);
  };
}
