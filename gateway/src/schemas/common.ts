/**
 * JSON Schemas shared by every resource. The same objects validate requests, shape
 * responses (fast-json-stringify) and produce the OpenAPI document, so the contract has
 * one source. Request schemas are inlined (the validators compile them standalone);
 * response bodies reference the named components registered in `sharedSchemas`.
 */

export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

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

export const platform = {
  type: "string",
  enum: ["ios", "android", "web"],
  description: "Push platform.",
} as const;

export const errorSchema = {
  $id: "Error",
  type: "object",
  description: "Every error: a stable name and a human-readable message.",
  required: ["error", "message"],
  additionalProperties: false,
  properties: {
    error: {
      type: "string",
      description:
        "Error name: ValidationError, Unauthorized, Forbidden, NotFound, Conflict, UnprocessableEntity, " +
        "PayloadTooLarge, UnsupportedMediaType, RateLimited, InternalError, ServiceUnavailable, " +
        "RequestHeaderFieldsTooLarge (431) and RequestTimeout (408) from the HTTP layer; " +
        "CampaignNotCancellable (409) when a campaign's delivery has already started.",
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
} as const;

/** Headers on every authenticated response. */
export const rateLimitHeaders = {
  "X-RateLimit-Limit": { type: "integer", description: "Requests allowed per minute for this key." },
  "X-RateLimit-Remaining": { type: "integer", description: "Requests left in the current window (0 when exceeded)." },
  "X-RateLimit-Reset": { type: "integer", description: "Unix time in seconds when the current window ends." },
} as const;

const retryAfter = {
  "Retry-After": { type: "integer", minimum: 1, description: "Seconds to wait before retrying." },
} as const;

const errorResponse = (description: string, headers: Record<string, unknown> = rateLimitHeaders) =>
  ({ description, headers, $ref: "Error#" }) as const;

/** The error statuses a route can answer; routes pick the ones that apply. */
export const errors = {
  400: errorResponse("ValidationError: the request is malformed or breaks the schema."),
  401: errorResponse("Unauthorized: missing or invalid credentials.", {
    "WWW-Authenticate": { type: "string", description: "Bearer challenge." },
  }),
  403: errorResponse(
    "Forbidden: the credentials' organization or app scope, or the signed-in user's role, does not permit this.",
  ),
  404: errorResponse("NotFound: no such resource (an id that is not a UUID names none either)."),
  409: errorResponse("Conflict: the resource already exists or its state forbids the change."),
  413: errorResponse("PayloadTooLarge: the body exceeds the size limit."),
  415: errorResponse("UnsupportedMediaType: the body is not application/json."),
  422: errorResponse("UnprocessableEntity: well-formed but semantically invalid."),
  429: errorResponse("RateLimited: the key's per-minute limit is used up.", { ...rateLimitHeaders, ...retryAfter }),
  500: errorResponse("InternalError: an unexpected failure; details are logged, never returned."),
  503: errorResponse("ServiceUnavailable: a backend service is unreachable; retry later."),
} as const;

type ErrorStatus = keyof typeof errors;

/** The errors any authenticated route can produce, plus the listed extras. */
export function errorResponses(...extra: ErrorStatus[]) {
  const statuses: ErrorStatus[] = [401, 429, 500, 503, ...extra];
  return Object.fromEntries(statuses.sort().map((s) => [s, errors[s]]));
}

export const ok = (description: string, ref: string) => ({ description, headers: rateLimitHeaders, $ref: `${ref}#` });

export const noContent = (description: string) => ({ description, headers: rateLimitHeaders, type: "null" }) as const;

/** Paging parameters; lists differ only in their default page size. */
export const pageQueryOf = (defaultPerPage: number) =>
  ({
    page: { type: "integer", minimum: 1, maximum: 1_000_000, default: 1, description: "Page number, from 1." },
    per_page: {
      type: "integer",
      minimum: 1,
      maximum: 200,
      default: defaultPerPage,
      description: `Items per page, 1 to 200 (default ${defaultPerPage}).`,
    },
  }) as const;

export const pageQuery = pageQueryOf(50);

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

export const idParams = (name: string, description: string) => ({
  type: "object",
  required: [name],
  additionalProperties: false,
  properties: { [name]: uuid(description) },
});
