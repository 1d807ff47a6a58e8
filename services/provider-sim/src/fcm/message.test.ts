import { describe, expect, it } from "vitest";
import { FCM_ERROR_TYPE } from "./fcm-errors.js";
import { checkSendRequest } from "./message.js";

const TOKEN = `cXk1:APA91b${"x".repeat(150)}`;

/** "ok", or the status, the detail kind (FcmError code or BadRequest) and the message. */
function outcome(body: unknown): string {
  const r = checkSendRequest(body);
  if (r.ok) return "ok";
  const { error } = r.refusal.body;
  const detail = error.details?.[0];
  const kind = detail?.["@type"] === FCM_ERROR_TYPE ? String(detail.errorCode) : "BadRequest";
  return `${error.code} ${error.status} ${kind}: ${error.message}`;
}
const send = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  outcome({ message: { token: TOKEN, ...message }, ...extra });

describe("checkSendRequest", () => {
  it("accepts a notification message with string data and Android options, in snake_case or camelCase", () => {
    const r = checkSendRequest({
      message: {
        token: TOKEN,
        notification: { title: "Hi", body: "there", image: "https://example.com/i.png" },
        data: { order: "42", "": "empty key is fine" },
        android: {
          priority: "high",
          ttl: "3600s",
          collapse_key: "c",
          notification: {
            channel_id: "news",
            notification_priority: "PRIORITY_HIGH",
            event_time: "2026-01-01T00:00:00Z",
            vibrate_timings: ["0.5s"],
            notification_count: 3,
          },
        },
        apns: { headers: { "apns-priority": "10" }, payload: { aps: { badge: 1 } } },
        webpush: { notification: { requireInteraction: true }, fcm_options: { link: "https://example.com" } },
        fcm_options: { analytics_label: "campaign_1" },
      },
      validate_only: true,
    });
    expect(r.ok && { target: r.value.target, validateOnly: r.value.validateOnly }).toEqual({
      target: { kind: "token", value: TOKEN },
      validateOnly: true,
    });
    expect(
      send(
        {
          android: { collapseKey: "c", directBootOk: true, ttl: "0.5s", priority: "NORMAL" },
          fcmOptions: { analyticsLabel: "x" },
        },
        { validateOnly: false },
      ),
    ).toBe("ok");
    expect(send({ data: null, notification: null })).toBe("ok");
  });

  it("needs exactly one of token, topic and condition", () => {
    expect(outcome({ message: { notification: { title: "t" } } })).toBe(
      "400 INVALID_ARGUMENT INVALID_ARGUMENT: Recipient of the message is not set.",
    );
    expect(outcome({ message: { token: TOKEN, topic: "news" } })).toMatch(
      /^400 INVALID_ARGUMENT BadRequest: .*oneof field 'target' is already set. Cannot set 'topic'/,
    );
    expect(outcome({ message: { topic: "news", condition: "'a' in topics" } })).toMatch(
      /oneof field 'target' is already set/,
    );
    expect(outcome({ message: { topic: "news" } })).toBe("ok");
    expect(outcome({ message: { condition: "'a' in topics && ('b' in topics || !('c' in topics))" } })).toBe("ok");
    expect(outcome({})).toMatch(/^400 INVALID_ARGUMENT INVALID_ARGUMENT/);
  });

  it("checks the form of tokens, topics and conditions", () => {
    const invalidToken =
      "400 INVALID_ARGUMENT INVALID_ARGUMENT: The registration token is not a valid FCM registration token";
    expect(outcome({ message: { token: "" } })).toBe(invalidToken);
    expect(outcome({ message: { token: "has space" } })).toBe(invalidToken);
    expect(outcome({ message: { topic: "/topics/news" } })).toMatch(/Invalid topic name/);
    for (const condition of [
      "",
      "'a' in topics &&",
      "a in topics",
      "('a' in topics",
      "'a' in topics && 'b' in topics && 'c' in topics && 'd' in topics && 'e' in topics && 'f' in topics",
    ]) {
      expect(outcome({ message: { condition } }), condition).toMatch(/Invalid condition expression/);
    }
  });

  it("refuses data values that are not strings, as Google's JSON parser does", () => {
    expect(send({ data: { n: 1 } })).toBe(
      "400 INVALID_ARGUMENT BadRequest: Invalid value at 'message.data[0].value' (TYPE_STRING), 1",
    );
    expect(send({ data: { a: "x", b: { nested: "y" } } })).toMatch(/'message.data\[1\].value' \(TYPE_STRING\)/);
    expect(send({ data: { a: null } })).toMatch(/TYPE_STRING/);
    expect(send({ data: ["x"] })).toMatch(/^400 INVALID_ARGUMENT BadRequest/);
    expect(send({ android: { data: { b: true } } })).toMatch(/'message.android.data\[0\].value'/);
  });

  it("refuses reserved data keys", () => {
    for (const key of ["from", "notification", "message_type", "google.c.a.e", "gcm.notification.title"]) {
      expect(send({ data: { [key]: "x" } }), key).toBe(
        `400 INVALID_ARGUMENT INVALID_ARGUMENT: Invalid data payload key: ${key}`,
      );
      expect(send({ android: { data: { [key]: "x" } } }), key).toMatch(/Invalid data payload key/);
    }
    for (const key of ["From", "google", "gcmx", "message-type"])
      expect(send({ data: { [key]: "x" } }), key).toBe("ok");
  });

  it("refuses unknown fields anywhere, and a field given both as snake_case and camelCase", () => {
    expect(send({ priority: "high" })).toBe(
      `400 INVALID_ARGUMENT BadRequest: Invalid JSON payload received. Unknown name "priority" at 'message': Cannot find field.`,
    );
    expect(send({ android: { time_to_live: "60s" } })).toMatch(/Unknown name "time_to_live" at 'message.android'/);
    expect(send({ notification: { title: "t", sound: "default" } })).toMatch(
      /Unknown name "sound" at 'message.notification'/,
    );
    expect(outcome({ message: { token: TOKEN }, dry_run: true })).toMatch(/Unknown name "dry_run": Cannot find field/);
    expect(send({ android: { collapse_key: "a", collapseKey: "b" } })).toMatch(/Duplicate field "collapse_key"/);
  });

  it("checks types: strings, booleans, durations, enums, objects", () => {
    expect(send({ notification: { title: 5 } })).toMatch(/'message.notification.title' \(TYPE_STRING\), 5/);
    expect(send({ android: { direct_boot_ok: "true" } })).toMatch(/TYPE_BOOL/);
    expect(send({ android: "high" })).toMatch(/AndroidConfig/);
    expect(outcome({ message: { token: TOKEN }, validate_only: "yes" })).toMatch(/TYPE_BOOL/);
    expect(outcome("not an object")).toMatch(/Expected an object/);
    expect(send({ apns: { payload: "aps" } })).toMatch(/google.protobuf.Struct/);
    expect(send({ android: { notification: { body_loc_args: ["a", 1] } } })).toMatch(/body_loc_args\[1\]/);
  });

  it("needs android.ttl as a duration string of at most four weeks", () => {
    expect(send({ android: { ttl: "2419200s" } })).toBe("ok");
    for (const ttl of ["3600", "3600 s", "1h", "1.5", 3600])
      expect(send({ android: { ttl } }), String(ttl)).toMatch(/google.protobuf.Duration/);
    expect(send({ android: { ttl: "2419201s" } })).toMatch(/^400 INVALID_ARGUMENT INVALID_ARGUMENT: TTL/);
    expect(send({ android: { ttl: "-1s" } })).toMatch(/^400 INVALID_ARGUMENT INVALID_ARGUMENT: TTL/);
  });

  it("takes android.priority normal or high, in either case", () => {
    for (const priority of ["normal", "high", "NORMAL", "HIGH"])
      expect(send({ android: { priority } }), priority).toBe("ok");
    for (const priority of ["urgent", "PRIORITY_HIGH", 1, ""]) {
      expect(send({ android: { priority } }), String(priority)).toMatch(/AndroidMessagePriority/);
    }
  });

  it("checks analytics labels", () => {
    expect(send({ fcm_options: { analytics_label: "a b" } })).toMatch(/Analytics label/);
    expect(send({ android: { fcm_options: { analytics_label: "x".repeat(51) } } })).toMatch(/Analytics label/);
  });

  it("limits the payload to 4096 bytes (2048 for topics), counted without the target", () => {
    const fill = (n: number) => "x".repeat(n);
    // {"data":{"k":"…"}} is 17 bytes of JSON around the value.
    expect(send({ data: { k: fill(4096 - 17) } })).toBe("ok");
    expect(send({ data: { k: fill(4096 - 16) } })).toMatch(
      /^400 INVALID_ARGUMENT INVALID_ARGUMENT: Message is too big/,
    );
    expect(send({ data: { k: "é".repeat(2041) } })).toMatch(/Message is too big/);
    expect(outcome({ message: { topic: "news", data: { k: fill(2048 - 17) } } })).toBe("ok");
    expect(outcome({ message: { topic: "news", data: { k: fill(2048 - 16) } } })).toMatch(/Message is too big/);
  });
});
