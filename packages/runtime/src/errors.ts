import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The one catalog of error names the API answers (`{"error": Name, "message": …}`), each
 * with its HTTP status and what it means. Every place that answers an error takes the name
 * and status from here: the gateway's replies (gateway/src/http-errors.ts), the errors the
 * services raise (below), the OpenAPI `Error` component and docs/design.md §3 Errors
 * (gateway/src/error-catalog.test.ts fails when those two disagree with this list).
 * The OAuth endpoints (/oauth/…) answer RFC 6749's own error codes instead.
 */
export const API_ERRORS = {
  ValidationError: {
    status: 400,
    meaning: "The request is malformed or breaks the schema; `details` names the fields.",
  },
  Unauthorized: { status: 401, meaning: "Credentials are missing, malformed, unknown, revoked or expired." },
  Forbidden: {
    status: 403,
    meaning: "The credentials may not do this: another organization or app, the key's kind, or the user's role.",
  },
  NotFound: { status: 404, meaning: "No such resource or route (an id that is not a UUID names none either)." },
  RequestTimeout: { status: 408, meaning: "The request did not arrive in time (HTTP layer)." },
  Conflict: { status: 409, meaning: "The resource already exists or its state forbids the change." },
  CampaignNotCancellable: { status: 409, meaning: "The campaign's delivery has already started." },
  PayloadTooLarge: { status: 413, meaning: "The body exceeds the size limit." },
  UnsupportedMediaType: {
    status: 415,
    meaning: "The body is not in the route's media type (application/json; application/x-ndjson for imports).",
  },
  UnprocessableEntity: { status: 422, meaning: "Well-formed, but semantically invalid." },
  RateLimited: { status: 429, meaning: "The per-minute limit is used up; `Retry-After` says when to retry." },
  RequestHeaderFieldsTooLarge: {
    status: 431,
    meaning: "The request line and headers exceed 16 KiB (HTTP layer).",
  },
  InternalError: { status: 500, meaning: "An unexpected failure; details are logged, never returned." },
  ServiceUnavailable: { status: 503, meaning: "A backend service is unreachable; retry later." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ApiErrorName = keyof typeof API_ERRORS;

export const isApiErrorName = (name: string): name is ApiErrorName => Object.hasOwn(API_ERRORS, name);

/** The HTTP status of an error name. */
export const statusOf = (name: ApiErrorName): number => API_ERRORS[name].status;

/**
 * Services signal client-facing failures with ConnectError. The gateway maps the code to
 * an HTTP status and the API's error name (docs/design.md §3 Errors); `herald-error`
 * metadata overrides the name where the contract wants a more specific one (e.g.
 * CampaignNotCancellable), with the status the catalog gives that name.
 */
export const ERROR_NAME_HEADER = "herald-error";

function make(code: Code, message: string, name?: ApiErrorName): ConnectError {
  const err = new ConnectError(message, code);
  if (name) err.metadata.set(ERROR_NAME_HEADER, name);
  return err;
}

export const invalidArgument = (message: string, name?: ApiErrorName) => make(Code.InvalidArgument, message, name);
export const notFound = (message: string) => make(Code.NotFound, message);
export const alreadyExists = (message: string, name?: ApiErrorName) => make(Code.AlreadyExists, message, name);
export const failedPrecondition = (message: string, name?: ApiErrorName) =>
  make(Code.FailedPrecondition, message, name);
export const permissionDenied = (message: string) => make(Code.PermissionDenied, message);
export const unauthenticated = (message: string) => make(Code.Unauthenticated, message);
export const resourceExhausted = (message: string) => make(Code.ResourceExhausted, message);
/** A conflict with the resource's state (e.g. cancelling a campaign already sending): 409. */
export const aborted = (message: string, name?: ApiErrorName) => make(Code.Aborted, message, name);

export { Code, ConnectError };
