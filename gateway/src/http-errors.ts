import { Code, ConnectError } from "@connectrpc/connect";
import { ERROR_NAME_HEADER } from "@herald/runtime";

/**
 * The one place that decides how a failure looks on the wire: an HTTP status and the
 * API's error body `{"error": Name, "message": text}` (plus `details` for validation;
 * docs/design.md §3 Errors).
 * Everything a route, hook or backend can throw ends up in `toErrorReply`.
 */

export interface FieldError {
  /** JSON pointer into the request part, e.g. `/contents/en`. */
  field: string;
  message: string;
}

export interface ErrorBody {
  error: string;
  message: string;
  details?: FieldError[];
}

export interface ErrorReply {
  status: number;
  body: ErrorBody;
  /** True when the cause is ours, not the client's: log it, never show it. */
  internal: boolean;
}

/** An error the gateway itself raises, already in wire terms. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorName: string,
    message: string,
    readonly details?: FieldError[],
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const badRequest = (message: string, details?: FieldError[]) =>
  new HttpError(400, "ValidationError", message, details);
export const unauthorized = (message: string) => new HttpError(401, "Unauthorized", message);
export const forbidden = (message: string) => new HttpError(403, "Forbidden", message);
export const notFound = (message: string) => new HttpError(404, "NotFound", message);
export const conflict = (message: string) => new HttpError(409, "Conflict", message);
export const rateLimited = (message: string) => new HttpError(429, "RateLimited", message);

const INTERNAL: ErrorReply = {
  status: 500,
  body: { error: "InternalError", message: "internal error" },
  internal: true,
};

const UNAVAILABLE: ErrorReply = {
  status: 503,
  body: { error: "ServiceUnavailable", message: "a backend service is unavailable; retry later" },
  internal: true,
};

const CONNECT_STATUS: Partial<Record<Code, { status: number; name: string }>> = {
  [Code.InvalidArgument]: { status: 400, name: "ValidationError" },
  [Code.OutOfRange]: { status: 400, name: "ValidationError" },
  [Code.Unauthenticated]: { status: 401, name: "Unauthorized" },
  [Code.PermissionDenied]: { status: 403, name: "Forbidden" },
  [Code.NotFound]: { status: 404, name: "NotFound" },
  [Code.AlreadyExists]: { status: 409, name: "Conflict" },
  [Code.Aborted]: { status: 409, name: "Conflict" },
  [Code.FailedPrecondition]: { status: 422, name: "UnprocessableEntity" },
  [Code.ResourceExhausted]: { status: 429, name: "RateLimited" },
};

/** Names of the 4xx statuses fastify itself produces (parsing, limits, media types). */
const STATUS_NAMES: Record<number, string> = {
  400: "ValidationError",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  411: "LengthRequired",
  413: "PayloadTooLarge",
  414: "UriTooLong",
  415: "UnsupportedMediaType",
  422: "UnprocessableEntity",
  429: "RateLimited",
  431: "HeadersTooLarge",
};

export function fromConnectError(err: ConnectError): ErrorReply {
  if (err.code === Code.Unavailable || err.code === Code.DeadlineExceeded) return UNAVAILABLE;
  const mapped = CONNECT_STATUS[err.code];
  if (!mapped) return INTERNAL;
  const name = err.metadata.get(ERROR_NAME_HEADER)?.trim() || mapped.name;
  return { status: mapped.status, body: { error: name, message: err.rawMessage }, internal: false };
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
  if (part === "params") {
    return { status: 404, body: { error: "NotFound", message: "no such resource" }, internal: false };
  }
  const details = fieldErrors(violations);
  const first = details[0];
  const message = first
    ? `invalid ${PART_LABEL[part]}: ${first.field} ${first.message}`
    : `invalid ${PART_LABEL[part]}`;
  return { status: 400, body: { error: "ValidationError", message, details }, internal: false };
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
  if (err instanceof HttpError) {
    const body: ErrorBody = { error: err.errorName, message: err.message };
    if (err.details) body.details = err.details;
    return { status: err.status, body, internal: err.status >= 500 };
  }
  if (err instanceof ConnectError) return fromConnectError(err);
  const e = (err ?? {}) as FastifyLikeError;
  if (Array.isArray(e.validation)) return fromSchemaViolations(e.validationContext ?? "body", e.validation);
  if (err instanceof SyntaxError) {
    // JSON.parse failures of a body: the message would quote the client's input.
    return { status: 400, body: { error: "ValidationError", message: INVALID_JSON }, internal: false };
  }
  const status = e.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    const name = STATUS_NAMES[status] ?? "ClientError";
    const message = (e.code && SAFE_MESSAGES[e.code]) ?? "the request could not be processed";
    return { status, body: { error: name, message }, internal: false };
  }
  return INTERNAL;
}
