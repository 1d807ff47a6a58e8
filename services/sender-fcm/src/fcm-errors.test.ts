import { describe, expect, it } from "vitest";
import { classify, DEFAULT_SLOW_DOWN_MS, MAX_SLOW_DOWN_MS, parseFcmError } from "./fcm-errors.js";

const NOW = Date.parse("2025-01-01T00:00:00Z");

/** An error answer shaped as FCM sends it. */
function fcmError(
  httpStatus: number,
  status: string,
  errorCode: string | undefined,
  headers: Record<string, string> = {},
  message = "msg",
) {
  const details = errorCode ? [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode }] : [];
  return {
    status: httpStatus,
    headers,
    body: JSON.stringify({ error: { code: httpStatus, message, status, details } }),
  };
}

describe("classify", () => {
  it("delivers on 200", () => {
    expect(classify({ status: 200, headers: {}, body: '{"name":"projects/p/messages/1"}' }, NOW)).toEqual({
      result: { kind: "delivered" },
    });
  });

  it("maps every FCM error code of docs/providers.md §FCM errors", () => {
    expect(classify(fcmError(404, "NOT_FOUND", "UNREGISTERED"), NOW)).toEqual({
      result: { kind: "bounced", reason: "UNREGISTERED" },
    });
    expect(
      classify(
        fcmError(
          400,
          "INVALID_ARGUMENT",
          "INVALID_ARGUMENT",
          {},
          "The registration token is not a valid FCM registration token",
        ),
        NOW,
      ),
    ).toEqual({
      result: {
        kind: "failed",
        reason: "INVALID_ARGUMENT: The registration token is not a valid FCM registration token",
      },
    });
    expect(classify(fcmError(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"), NOW)).toEqual({
      result: { kind: "failed", reason: "SENDER_ID_MISMATCH" },
    });
    expect(classify(fcmError(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR"), NOW)).toEqual({
      result: { kind: "failed", reason: "THIRD_PARTY_AUTH_ERROR" },
    });
    expect(classify(fcmError(401, "UNAUTHENTICATED", "APNS_AUTH_ERROR"), NOW)).toEqual({
      result: { kind: "failed", reason: "THIRD_PARTY_AUTH_ERROR" },
    });
    expect(classify(fcmError(503, "UNAVAILABLE", "UNAVAILABLE"), NOW)).toEqual({
      result: { kind: "retry", reason: "UNAVAILABLE", retryAfterMs: undefined },
    });
    expect(classify(fcmError(500, "INTERNAL", "INTERNAL"), NOW)).toEqual({
      result: { kind: "retry", reason: "INTERNAL", retryAfterMs: undefined },
    });
    expect(classify(fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), NOW)).toEqual({
      result: { kind: "retry", reason: "QUOTA_EXCEEDED", throttled: true, retryAfterMs: undefined },
      slowDownMs: DEFAULT_SLOW_DOWN_MS,
    });
  });

  it("honours Retry-After in seconds and as an HTTP date", () => {
    expect(classify(fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", { "retry-after": "30" }), NOW)).toEqual({
      result: { kind: "retry", reason: "QUOTA_EXCEEDED", throttled: true, retryAfterMs: 30_000 },
      slowDownMs: 30_000,
    });
    const date = new Date(NOW + 5_000).toUTCString();
    expect(classify(fcmError(503, "UNAVAILABLE", "UNAVAILABLE", { "retry-after": date }), NOW).result).toEqual({
      kind: "retry",
      reason: "UNAVAILABLE",
      retryAfterMs: 5_000,
    });
  });

  it("pauses a project at most MAX_SLOW_DOWN_MS, however long the Retry-After", () => {
    for (const retryAfter of ["86400", "99999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"]) {
      const c = classify(fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", { "retry-after": retryAfter }), NOW);
      expect(c.slowDownMs).toBe(MAX_SLOW_DOWN_MS);
      // The device's own retry still hears the whole wait (and gives up on it: throttled).
      expect(c.result).toMatchObject({ kind: "retry", throttled: true, retryAfterMs: expect.any(Number) });
    }
  });

  it("judges answers without an FcmError by their status", () => {
    // Google refusing the access token itself: a new token may help.
    expect(classify(fcmError(401, "UNAUTHENTICATED", undefined), NOW)).toEqual({
      result: { kind: "retry", reason: "UNAUTHENTICATED" },
      staleToken: true,
    });
    expect(classify(fcmError(429, "RESOURCE_EXHAUSTED", undefined, { "retry-after": "2" }), NOW)).toMatchObject({
      result: { kind: "retry", throttled: true, retryAfterMs: 2_000 },
      slowDownMs: 2_000,
    });
    expect(classify(fcmError(403, "PERMISSION_DENIED", undefined, {}, "FCM API not enabled"), NOW)).toEqual({
      result: { kind: "failed", reason: "PERMISSION_DENIED: FCM API not enabled" },
    });
    // A 404 without UNREGISTERED is a wrong project or URL, not a dead token.
    expect(
      classify(fcmError(404, "NOT_FOUND", undefined, {}, "Requested entity was not found."), NOW).result.kind,
    ).toBe("failed");
    expect(classify({ status: 502, headers: {}, body: "<html>bad gateway</html>" }, NOW)).toEqual({
      result: { kind: "retry", reason: "HTTP_502", retryAfterMs: undefined },
    });
    expect(classify({ status: 400, headers: {}, body: "" }, NOW)).toEqual({
      result: { kind: "failed", reason: "HTTP_400" },
    });
    expect(classify(fcmError(400, "INVALID_ARGUMENT", "UNSPECIFIED_ERROR", {}, "x"), NOW)).toEqual({
      result: { kind: "failed", reason: "UNSPECIFIED_ERROR: x" },
    });
    // Empty names name nothing: the status does.
    const unnamed = {
      error: {
        status: "",
        details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "" }],
      },
    };
    expect(classify({ status: 400, headers: {}, body: JSON.stringify(unnamed) }, NOW)).toEqual({
      result: { kind: "failed", reason: "HTTP_400" },
    });
  });

  it("keeps provider messages short", () => {
    expect(parseFcmError(JSON.stringify({ error: { message: "m".repeat(1000) } })).message).toHaveLength(200);
    expect(parseFcmError("null")).toEqual({});
  });
});
