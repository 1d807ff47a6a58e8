import { Code, ConnectError } from "@connectrpc/connect";
import { API_ERRORS, type ApiErrorName, ERROR_NAME_HEADER, isApiErrorName, statusOf } from "@herald/runtime";

/**
 * The one place that decides how a failure looks on the wire: an HTTP status and the
 * API's error body `{"error": Name, "message": text}` (plus `details` for validation;
 * docs/design.md §3 Errors).
 * Everything a route, hook or backend can throw ends up in `toErrorReply`. Names and
 * statuses come from the one catalog, API_ERRORS (packages/runtime/src/errors.ts).
 */

export interface FieldError {
  /** JSON pointer into the request part, e.g. `/contents/en`. */
  field: string;
  message: string;
}

export interface ErrorBody {
  error: ApiErrorName;
  message: string;
  details?: FieldError[];
}

export interface ErrorReply {
  status: number;
  body: ErrorBody;
  /** True when the cause is ours, not the client's: log it, never show it. */
  internal: boolean;
}

/** An error the gateway itself raises, already in wire terms: its status is its name's. */
export class HttpError extends Error {
  readonly status: number;

  constructor(
    readonly errorName: ApiErrorName,
    message: string,
    readonly details?: FieldError[],
  ) {
    super(message);
    this.name = "HttpError";
    this.status = statusOf(errorName);
  }
}

export const badRequest = (message: string, details?: FieldError[]) =>
  new HttpError("ValidationError", message, details);
export const unauthorized = (message: string) => new HttpError("Unauthorized", message);
export const forbidden = (message: string) => new HttpError("Forbidden", message);
export const notFound = (message: string) => new HttpError("NotFound", message);
export const conflict = (message: string) => new HttpError("Conflict", message);
export const rateLimited = (message: string) => new HttpError("RateLimited", message);
export const unsupportedMediaType = (message: string) => new HttpError("UnsupportedMediaType", message);
export const serviceUnavailable = (message: string) => new HttpError("ServiceUnavailable", message);

/** The reply for an error name, status from the catalog; 5xx are ours (logged, never shown). */
export function errorReply(name: ApiErrorName, message: string, details?: FieldError[]): ErrorReply {
  const status = statusOf(name);
  const body: ErrorBody = { error: name, message };
  if (details) body.details = details;
  return { status, body, internal: status >= 500 };
}

/** The wire body alone, for the few answers sent outside the error handler. */
export const errorBody = (name: ApiErrorName, message: string): ErrorBody => ({ error: name, message });

const INTERNAL = errorReply("InternalError", "internal error");
const UNAVAILABLE = errorReply("ServiceUnavailable", "a backend service is unavailable; retry later");

const CONNECT_NAMES: Partial<Record<Code, ApiErrorName>> = {
  [Code.InvalidArgument]: "ValidationError",
  [Code.OutOfRange]: "ValidationError",
  [Code.Unauthenticated]: "Unauthorized",
  [Code.PermissionDenied]: "Forbidden",
  [Code.NotFound]: "NotFound",
  [Code.AlreadyExists]: "Conflict",
  [Code.Aborted]: "Conflict",
  [Code.FailedPrecondition]: "UnprocessableEntity",
  [Code.ResourceExhausted]: "RateLimited",
};

/** The catalog's name for each 4xx status fastify itself produces (parsing, limits, media types). */
const FRAMEWORK_NAMES: Partial<Record<number, ApiErrorName>> = Object.fromEntries(
  (["ValidationError", "NotFound", "PayloadTooLarge", "UnsupportedMediaType"] as const).map((n) => [
    API_ERRORS[n].status,
    n,
  ]),
);

export function fromConnectError(err: ConnectError): ErrorReply {
  if (err.code === Code.Unavailable || err.code === Code.DeadlineExceeded) return UNAVAILABLE;
  const mapped = CONNECT_NAMES[err.code];
  if (!mapped) return INTERNAL;
  // A service may name a more specific error (herald-error); only names of the catalog pass.
  const named = err.metadata.get(ERROR_NAME_HEADER)?.trim() ?? "";
  const name = isApiErrorName(named) && statusOf(named) === statusOf(mapped) ? named : mapped;
  return errorReply(name, err.rawMessage);
}

/** The shape of ajv errors as fastify attaches them (`err.validation`). */
export interface SchemaViolation {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set by ajv on the failures inside `propertyNames`: the offending key. */
  propertyName?: string;
}

export type RequestPart = "body" | "querystring" | "params" | "headers";

const PART_LABEL: Record<RequestPart, string> = {
  body: "request body",
  querystring: "query parameter",
  params: "path parameter",
  headers: "header",
};

/** A key as a JSON pointer segment, cut short: it is the client's input. */
export const pointerSegment = (key: string): string => key.slice(0, 64).replaceAll("~", "~0").replaceAll("/", "~1");

export function fieldErrors(violations: SchemaViolation[]): FieldError[] {
  // A bad key yields two violations, the inner one (with propertyName) and the
  // `propertyNames` summary; one detail naming the key says it all.
  return violations
    .filter((v) => v.propertyName === undefined)
    .map((v) => {
      let field = v.instancePath;
      let message = v.message ?? "is invalid";
      if (v.keyword === "required") {
        field += `/${String(v.params.missingProperty)}`;
        message = "is required";
      }
      if (v.keyword === "additionalProperties") {
        field += `/${pointerSegment(String(v.params.additionalProperty))}`;
        message = "is not a known field";
      }
      if (v.keyword === "propertyNames" && typeof v.params.propertyName === "string") {
        field += `/${pointerSegment(v.params.propertyName)}`;
        message = "is not an allowed key";
      }
      if (v.keyword === "discriminator" && typeof v.params.tag === "string") {
        field += `/${v.params.tag}`;
        message = v.params.error === "tag" ? "is required and must be a string" : "is not one of the allowed values";
      }
      return { field: field || "/", message };
    });
}

/**
 * Schema failures are 400s, except for path parameters: an id that cannot exist
 * (not a UUID) names no resource, so it is a 404 like any other unknown id.
 */
export function fromSchemaViolations(part: RequestPart, violations: SchemaViolation[]): ErrorReply {
  if (part === "params") return errorReply("NotFound", "no such resource");
  const details = fieldErrors(violations);
  const first = details[0];
  const message = first
    ? `invalid ${PART_LABEL[part]}: ${first.field} ${first.message}`
    : `invalid ${PART_LABEL[part]}`;
  return errorReply("ValidationError", message, details);
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  validation?: SchemaViolation[];
  validationContext?: RequestPart;
  message?: string;
}

const INVALID_JSON = "request body is not valid JSON";

/** Messages of fastify's own client errors that we replace, because they echo input. */
const SAFE_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: INVALID_JSON,
  FST_ERR_CTP_BODY_TOO_LARGE: "request body is too large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported content type; send application/json",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "content-length does not match the body",
};

export function toErrorReply(err: unknown): ErrorReply {
  if (err instanceof HttpError) return errorReply(err.errorName, err.message, err.details);
  if (err instanceof ConnectError) return fromConnectError(err);
  const e = (err ?? {}) as FastifyLikeError;
  if (Array.isArray(e.validation)) return fromSchemaViolations(e.validationContext ?? "body", e.validation);
  if (err instanceof SyntaxError) {
    // JSON.parse failures of a body: the message would quote the client's input.
    return errorReply("ValidationError", INVALID_JSON);
  }
  const status = e.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // A 4xx the catalog has no name for (none is known) is answered as a plain 400.
    const name = FRAMEWORK_NAMES[status] ?? "ValidationError";
    const message = (e.code && SAFE_MESSAGES[e.code]) ?? "the request could not be processed";
    return errorReply(name, message);
  }
  return INTERNAL;
}
