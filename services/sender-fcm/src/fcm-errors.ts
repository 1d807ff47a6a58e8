import { parseRetryAfter, type Http2Response, type SendResult } from "@herald/sender";

export type FcmResponse = Pick<Http2Response, "status" | "headers" | "body">;

/** What one answer of `messages:send` means for the device, and for later sends. */
export interface Classification {
  result: SendResult;
  /** FCM refused the access token itself (not a device's APNs/web credentials): fetch a new one. */
  staleToken?: boolean;
  /** The project is over its quota: hold its other sends back this long. */
  slowDownMs?: number;
}

/** Pause after QUOTA_EXCEEDED without a Retry-After: long enough to thin a burst out. */
export const DEFAULT_SLOW_DOWN_MS = 1_000;
/**
 * The longest pause a Retry-After can impose on a project's sends. Longer would hold
 * every batch of the project past its retry budget (the device retries give up first),
 * and a value too large for a timer (which then fires at once) would spin the pause loop
 * for ever.
 */
export const MAX_SLOW_DOWN_MS = 60_000;
const MAX_MESSAGE_CHARS = 200;

interface FcmErrorBody {
  /** The FcmError detail's errorCode, the most specific name FCM gives. */
  errorCode?: string;
  /** The google.rpc status, e.g. NOT_FOUND for UNREGISTERED. */
  status?: string;
  message?: string;
}

/** Reads `{"error": {code, message, status, details: [{"@type": …FcmError, errorCode}]}}`; tolerant of anything else. */
export function parseFcmError(body: string): FcmErrorBody {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return {};
  }
  const error = (doc as { error?: unknown } | null)?.error;
  if (typeof error !== "object" || error === null) return {};
  const e = error as { status?: unknown; message?: unknown; details?: unknown };
  const details = Array.isArray(e.details) ? (e.details as { "@type"?: unknown; errorCode?: unknown }[]) : [];
  const fcm = details.find(
    (d) => typeof d?.["@type"] === "string" && d["@type"].endsWith("google.firebase.fcm.v1.FcmError"),
  );
  // An empty name names nothing: the answer is then judged (and named) by what else it says.
  return {
    errorCode: typeof fcm?.errorCode === "string" && fcm.errorCode !== "" ? fcm.errorCode : undefined,
    status: typeof e.status === "string" && e.status !== "" ? e.status : undefined,
    message: typeof e.message === "string" ? e.message.slice(0, MAX_MESSAGE_CHARS) : undefined,
  };
}

/**
 * The FCM error table (docs/providers.md §FCM errors): UNREGISTERED is a dead token;
 * QUOTA_EXCEEDED slows the project down and retries after Retry-After, ending
 * throttled; UNAVAILABLE and INTERNAL retry with backoff; INVALID_ARGUMENT,
 * SENDER_ID_MISMATCH and THIRD_PARTY_AUTH_ERROR fail with the reason. Answers without an
 * FcmError detail are judged by their status.
 */
export function classify(res: FcmResponse, nowMs = Date.now()): Classification {
  if (res.status >= 200 && res.status < 300) return { result: { kind: "delivered" } };
  const err = parseFcmError(res.body);
  const retryAfterMs = parseRetryAfter(res.headers["retry-after"], nowMs);
  const withMessage = (name: string) => (err.message ? `${name}: ${err.message}` : name);
  const quota = (name: string): Classification => ({
    result: { kind: "retry", reason: name, throttled: true, retryAfterMs },
    slowDownMs: Math.min(retryAfterMs ?? DEFAULT_SLOW_DOWN_MS, MAX_SLOW_DOWN_MS),
  });

  switch (err.errorCode) {
    case "UNREGISTERED":
      return { result: { kind: "bounced", reason: "UNREGISTERED" } };
    case "QUOTA_EXCEEDED":
      return quota("QUOTA_EXCEEDED");
    case "UNAVAILABLE":
    case "INTERNAL":
      return { result: { kind: "retry", reason: err.errorCode, retryAfterMs } };
    case "INVALID_ARGUMENT":
      return { result: { kind: "failed", reason: withMessage("INVALID_ARGUMENT") } };
    case "SENDER_ID_MISMATCH":
      return { result: { kind: "failed", reason: "SENDER_ID_MISMATCH" } };
    // APNS_AUTH_ERROR is the older name FCM still documents for the same condition.
    case "THIRD_PARTY_AUTH_ERROR":
    case "APNS_AUTH_ERROR":
      return { result: { kind: "failed", reason: "THIRD_PARTY_AUTH_ERROR" } };
    case undefined:
      break;
    default:
      return { result: { kind: "failed", reason: withMessage(err.errorCode) } };
  }

  const name = err.status ?? `HTTP_${res.status}`;
  // A 401 with no FcmError is Google refusing our OAuth access token (expired, revoked).
  if (res.status === 401) return { result: { kind: "retry", reason: name }, staleToken: true };
  if (res.status === 429) return quota(name);
  if (res.status >= 500) return { result: { kind: "retry", reason: name, retryAfterMs } };
  return { result: { kind: "failed", reason: withMessage(name) } };
}
