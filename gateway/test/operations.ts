import type { FastifyInstance } from "fastify";

/** One /v1 operation of the gateway's OpenAPI document, with what the access tests need. */
export interface Operation {
  method: string;
  path: string;
  operationId: string;
  /** `x-herald-min-role`: the weakest role that may call it. */
  minRole: unknown;
  /** `x-herald-client-key`: whether and how a client key may call it. */
  clientKey: unknown;
  isPublic: boolean;
  query: string[];
}

interface OpenApiOperation {
  operationId: string;
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  [extension: `x-${string}`]: unknown;
}

/**
 * Every /v1 operation the running gateway documents, so that tests over all routes cover
 * a new route without being told.
 */
export async function v1Operations(app: FastifyInstance): Promise<Operation[]> {
  const doc = (await app.inject({ url: "/openapi.json" })).json() as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    path.startsWith("/v1/")
      ? Object.entries(item).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          minRole: op["x-herald-min-role"],
          clientKey: op["x-herald-client-key"],
          isPublic: Array.isArray(op.security) && op.security.length === 0,
          query: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        }))
      : [],
  );
}
