/**
 * JSON Schemas shared by every resource. The same objects validate requests, shape
 * responses (fast-json-stringify) and produce the OpenAPI document, so the contract has
 * one source. Request schemas are inlined (the validators compile them standalone);
 * response bodies reference the named components registered in `sharedSchemas`.
 */

import { API_ERRORS, type ApiErrorName, PAGING, UUID_PATTERN } from "@herald/runtime";

/** The catalog's names (packages/runtime/src/errors.ts), in its order. */
const ERROR_NAMES = Object.keys(API_ERRORS) as ApiErrorName[];

export { UUID_PATTERN };

export const uuid = (description: string) =>
  ({
    type: "string",
    format: "uuid",
    pattern: UUID_PATTERN,
    description,
    examples: ["7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11"],
  }) as const;

export const timestamp = (description: string) =>
  ({ type: "string", format: "date-time", description, examples: ["2026-11-21T10:00:00.000Z"] }) as const;

/** A count: an integer from 0. */
export const counter = (description: string) => ({ type: "integer", minimum: 0, description }) as const;

/** The same schema, with null allowed (a value not known yet, or cleared). */
export const nullable = <T extends { type: string }>(schema: T) =>
  ({ ...schema, type: [schema.type, "null"] }) as const;

export const platform = {
  type: "string",
  enum: ["ios", "android", "web"],
  description: "Push platform.",
} as const;

/**
 * A named schema (`$id`): routes reference it as `Name#`, and it becomes a component of the
 * OpenAPI document. An object with exactly `properties`, each required but the `optional` ones.
 */
export function component<const P extends Record<string, object>>(
  id: string,
  about: { description: string } | { title: string },
  properties: P,
  optional: readonly string[] = [],
) {
  return {
    $id: id,
    type: "object",
    ...about,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
    properties,
  } as const;
}

export const errorSchema = component(
  "Error",
  { description: "Every error: a stable name and a human-readable message." },
  {
    error: {
      type: "string",
      enum: ERROR_NAMES,
      description: `Error name (status): ${ERROR_NAMES.map((n) => `${n} (${API_ERRORS[n].status})`).join(", ")}.`,
      examples: ["ValidationError"],
    },
    message: {
      type: "string",
      description: "Human-readable explanation.",
      examples: ["invalid request body: /name must be string"],
    },
    details: {
      type: "array",
      description: "For validation errors: which field failed and why.",
      items: {
        type: "object",
        required: ["field", "message"],
        additionalProperties: false,
        properties: {
          field: { type: "string", description: "JSON pointer into the request part.", examples: ["/contents/en"] },
          message: { type: "string", examples: ["must have required property 'title'"] },
        },
      },
    },
  },
  ["details"],
);

/** Headers on every authenticated response. */
export const rateLimitHeaders = {
  "X-RateLimit-Limit": { type: "integer", description: "Requests allowed per minute for this key." },
  "X-RateLimit-Remaining": { type: "integer", description: "Requests left in the current window (0 when exceeded)." },
  "X-RateLimit-Reset": { type: "integer", description: "Unix time in seconds when the current window ends." },
} as const;

const retryAfter = {
  "Retry-After": { type: "integer", minimum: 1, description: "Seconds to wait before retrying." },
} as const;

const errorResponse = (status: number, headers: Record<string, unknown> = rateLimitHeaders) =>
  ({
    description: ERROR_NAMES.filter((n) => API_ERRORS[n].status === status)
      .map((n) => `${n}: ${API_ERRORS[n].meaning}`)
      .join(" "),
    headers,
    $ref: "Error#",
  }) as const;

/** The error statuses a route can answer, described from the catalog; routes pick the ones that apply. */
export const errors = {
  400: errorResponse(400),
  401: errorResponse(401, { "WWW-Authenticate": { type: "string", description: "Bearer challenge." } }),
  403: errorResponse(403),
  404: errorResponse(404),
  409: errorResponse(409),
  413: errorResponse(413),
  415: errorResponse(415),
  422: errorResponse(422),
  429: errorResponse(429, { ...rateLimitHeaders, ...retryAfter }),
  500: errorResponse(500),
  503: errorResponse(503),
} as const;

type ErrorStatus = keyof typeof errors;

/** The errors any authenticated route can produce, plus the listed extras. */
export function errorResponses(...extra: ErrorStatus[]) {
  const statuses: ErrorStatus[] = [401, 429, 500, 503, ...extra];
  return Object.fromEntries(statuses.sort().map((s) => [s, errors[s]]));
}

export const ok = (description: string, ref: string) => ({ description, headers: rateLimitHeaders, $ref: `${ref}#` });

export const noContent = (description: string) => ({ description, headers: rateLimitHeaders, type: "null" }) as const;

/**
 * The paging parameters of every list route, from the one paging rule (PAGING,
 * packages/runtime/src/paging.ts): out-of-range values are refused with 400, never clamped.
 */
export const pageQuery = {
  page: {
    type: "integer",
    minimum: 1,
    maximum: PAGING.maxPage,
    default: 1,
    description: `Page number, from 1 (at most ${PAGING.maxPage.toLocaleString("en")}); out of range: 400 ValidationError.`,
  },
  per_page: {
    type: "integer",
    minimum: 1,
    maximum: PAGING.maxPerPage,
    default: PAGING.defaultPerPage,
    description: `Items per page, 1 to ${PAGING.maxPerPage} (default ${PAGING.defaultPerPage}); out of range: 400 ValidationError.`,
  },
} as const;

/** The list envelope of items that are the named component. */
export const listOf = (ref: string, description: string) => ({
  description,
  headers: rateLimitHeaders,
  type: "object",
  required: ["data", "page", "per_page", "total"],
  additionalProperties: false,
  properties: {
    data: { type: "array", items: { $ref: `${ref}#` } },
    page: { type: "integer", minimum: 1, description: "The page returned." },
    per_page: { type: "integer", minimum: 1, description: "The page size used." },
    total: { type: "integer", minimum: 0, description: "Items across all pages." },
  },
});

/** Path parameters: each one required, no others. */
export const pathParams = <P extends Record<string, object>>(properties: P) => ({
  type: "object",
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});

export const idParams = (name: string, description: string) => pathParams({ [name]: uuid(description) });

/** /v1/apps/{app_id} and the routes below it. */
export const appParams = idParams("app_id", "App id.");

/** /v1/apps/{app_id}/…/{name}: one item of an app, by the item's own path parameter. */
export const appItemParams = (name: string, item: object) => pathParams({ app_id: uuid("App id."), [name]: item });

/** The app of an app's list that organization-scoped callers may ask for (app-scoped ones get their own). */
export const appQuery = {
  app_id: uuid("The app; required for organization-scoped callers, defaults to the key's app for app-scoped ones."),
};

/** A list route's query string: its filters, then the paging parameters. */
export const pageQuerystring = (filters: Record<string, object> = {}) => ({
  type: "object",
  properties: { ...filters, ...pageQuery },
});
