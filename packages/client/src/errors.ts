import type { components } from "./schema.js";

/** The API's error body: `{error, message}`, plus `details` for validation errors. */
export type ErrorBody = components["schemas"]["Error"];

/** What an openapi-fetch call resolves to. */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as ErrorBody).error === "string" &&
  typeof (v as ErrorBody).message === "string";

/**
 * A request the API answered with an error status. `error` is the API's stable error
 * name (e.g. "NotFound", "RateLimited"), `message` its human-readable text.
 */
export class HeraldError extends Error {
  override readonly name = "HeraldError";
  /** HTTP status. */
  readonly status: number;
  /** The API's error name; `HttpError` when the body was not the API's error JSON (e.g. a proxy's page). */
  readonly error: string;
  /** For validation errors: which field failed and why. */
  readonly details: ErrorBody["details"];
  /** The gateway's X-Request-Id: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds to wait before retrying, from Retry-After (429 and some 503s). */
  readonly retryAfterSeconds: number | undefined;

  constructor(response: Response, body: unknown) {
    // The API's names are a closed list (ErrorBody["error"]); a foreign body gets "HttpError".
    const parsed: { error: string; message: string; details?: ErrorBody["details"] } = isErrorBody(body)
      ? body
      : { error: "HttpError", message: `${response.status} ${response.statusText}`.trim() };
    super(parsed.message);
    this.status = response.status;
    this.error = parsed.error;
    this.details = parsed.details;
    this.requestId = response.headers.get("x-request-id") ?? undefined;
    const retryAfter = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
    this.retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }
}

/**
 * The data of a successful call, or a thrown HeraldError:
 * `const app = unwrap(await herald.POST("/v1/apps", { body }))`.
 */
export function unwrap<T>(result: FetchResult<T>): T {
  if (!result.response.ok) throw new HeraldError(result.response, result.error);
  return result.data as T;
}
