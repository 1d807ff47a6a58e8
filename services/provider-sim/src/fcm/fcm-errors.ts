/**
 * FCM HTTP v1 error bodies, shaped as Google's API front end answers:
 * `{"error": {"code", "message", "status", "details": [...]}}`. Errors FCM itself
 * raises carry an `FcmError` detail with its `errorCode`; errors of the JSON-to-proto
 * layer (unknown field, wrong type, two targets) carry a `google.rpc.BadRequest` detail
 * instead, and authentication errors an `ErrorInfo` or nothing.
 */
export type FcmErrorCode =
  | "UNSPECIFIED_ERROR"
  | "INVALID_ARGUMENT"
  | "UNREGISTERED"
  | "SENDER_ID_MISMATCH"
  | "QUOTA_EXCEEDED"
  | "UNAVAILABLE"
  | "INTERNAL"
  | "THIRD_PARTY_AUTH_ERROR";

export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: Record<string, unknown>[] };
}

export interface FcmRefusal {
  status: number;
  body: GoogleErrorBody;
  headers?: Record<string, string>;
}

export type FcmChecked<T> = { ok: true; value: T } | { ok: false; refusal: FcmRefusal };

export const FCM_ERROR_TYPE = "type.googleapis.com/google.firebase.fcm.v1.FcmError";

/** google.rpc.Code names by HTTP status, as Google's front end maps them. */
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "UNIMPLEMENTED",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? "UNKNOWN";
}

export function googleError(
  status: number,
  message: string,
  details?: Record<string, unknown>[],
): { ok: false; refusal: FcmRefusal } {
  const error: GoogleErrorBody["error"] = { code: status, message, status: statusName(status) };
  if (details) error.details = details;
  return { ok: false, refusal: { status, body: { error } } };
}

/** An error FCM raises itself, with its FcmError code. */
export function fcmError(status: number, errorCode: FcmErrorCode, message: string): { ok: false; refusal: FcmRefusal } {
  return googleError(status, message, [{ "@type": FCM_ERROR_TYPE, errorCode }]);
}

/** A request that does not parse into the v1 message schema. */
export function badRequest(field: string, description: string): { ok: false; refusal: FcmRefusal } {
  return googleError(400, description, [
    { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description }] },
  ]);
}

/** FcmError codes by status (docs/providers.md §FCM errors), for injected faults. */
export function faultErrorCode(status: number): FcmErrorCode {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "THIRD_PARTY_AUTH_ERROR";
    case 403:
      return "SENDER_ID_MISMATCH";
    case 404:
      return "UNREGISTERED";
    case 429:
      return "QUOTA_EXCEEDED";
    case 500:
      return "INTERNAL";
    case 503:
      return "UNAVAILABLE";
    default:
      return "UNSPECIFIED_ERROR";
  }
}
