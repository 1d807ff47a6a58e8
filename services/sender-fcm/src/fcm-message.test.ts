import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import { DeliveryBatchSchema, RenderedPayloadSchema } from "@herald/proto/delivery";
import { describe, expect, it } from "vitest";
import { pushPayloadCases } from "../../../test/support/push-payload-fixtures.js";
import { fcmData, fcmMessage, isReservedDataKey, payloadBytes, remainingTtlSeconds, sendBody } from "./fcm-message.js";

const NOW = 1_700_000_000_000;

function batch(
  extra: Partial<{
    ttlSeconds: number;
    highPriority: boolean;
    collapseId: string;
    imageUrl: string;
    createdAtMs: number;
  }> = {},
) {
  return create(DeliveryBatchSchema, {
    campaignId: "c1",
    appId: "a1",
    platform: Platform.ANDROID,
    ttlSeconds: extra.ttlSeconds ?? 0,
    highPriority: extra.highPriority ?? false,
    collapseId: extra.collapseId,
    imageUrl: extra.imageUrl,
    createdAt: timestampFromMs(extra.createdAtMs ?? NOW),
  });
}
const payload = create(RenderedPayloadSchema, { index: 0, title: "Hello", body: "How are you?" });

describe("fcmMessage", () => {
  it("maps title, body and image to a notification and the options to android", () => {
    const b = batch({
      ttlSeconds: 3600,
      highPriority: true,
      collapseId: "news",
      imageUrl: "https://img.example/x.png",
    });
    expect(fcmMessage("tok", b, payload, { k: "v" }, remainingTtlSeconds(b, NOW))).toEqual({
      token: "tok",
      notification: { title: "Hello", body: "How are you?", image: "https://img.example/x.png" },
      data: { k: "v", herald_campaign_id: "c1" },
      android: { priority: "high", ttl: "3600s", collapse_key: "news" },
    });
  });

  it("leaves out what the send did not set", () => {
    const empty = create(RenderedPayloadSchema, { index: 0, title: "", body: "" });
    expect(fcmMessage("tok", batch(), empty, {}, undefined)).toEqual({
      token: "tok",
      data: { herald_campaign_id: "c1" },
      android: { priority: "normal" },
    });
    expect(
      fcmMessage("tok", batch(), create(RenderedPayloadSchema, { body: "only body" }), {}, undefined).notification,
    ).toEqual({ body: "only body" });
  });

  it("sends the body FCM documents and measures the payload without the target", () => {
    const m = fcmMessage("t".repeat(150), batch(), payload, {}, undefined);
    const body = JSON.parse(sendBody(m));
    expect(body).toEqual({ message: m });
    expect(payloadBytes(m)).toBe(
      Buffer.byteLength(JSON.stringify({ notification: m.notification, data: m.data, android: m.android })),
    );
  });

  it("carries the campaign's id in every message's data, and no data key replaces it", () => {
    expect(fcmMessage("tok", batch(), payload, { herald_campaign_id: "spoofed", k: "v" }, undefined).data).toEqual({
      herald_campaign_id: "c1",
      k: "v",
    });
  });
});

describe("remainingTtlSeconds", () => {
  it("counts the ttl from the campaign's creation, within FCM's four weeks", () => {
    expect(remainingTtlSeconds(batch({ ttlSeconds: 0 }), NOW)).toBeUndefined();
    expect(remainingTtlSeconds(batch({ ttlSeconds: 3600 }), NOW + 600_000)).toBe(3000);
    expect(remainingTtlSeconds(batch({ ttlSeconds: 3600 }), NOW + 500)).toBe(3600);
    expect(remainingTtlSeconds(batch({ ttlSeconds: 60 }), NOW + 120_000)).toBe(0);
    expect(remainingTtlSeconds(batch({ ttlSeconds: 40 * 24 * 3600 }), NOW)).toBe(28 * 24 * 3600);
  });
});

describe("fcmData", () => {
  it("passes strings and stringifies every other JSON value", () => {
    const json = JSON.stringify({ s: "x", n: 42, f: 1.5, b: true, z: null, o: { a: [1, "2"] }, a: [1, 2] });
    expect(fcmData(json)).toEqual({
      ok: true,
      data: { s: "x", n: "42", f: "1.5", b: "true", z: "null", o: '{"a":[1,"2"]}', a: "[1,2]" },
    });
    expect(fcmData("")).toEqual({ ok: true, data: {} });
  });

  it("refuses reserved keys and anything that is not a JSON object", () => {
    for (const key of ["from", "notification", "message_type", "google.c.a.e", "gcm.n.e", "googleFoo", "GCM.x"]) {
      expect(isReservedDataKey(key)).toBe(true);
      expect(fcmData(JSON.stringify({ ok: "1", [key]: "x" }))).toEqual({
        ok: false,
        reason: `ReservedDataKey: ${key}`,
      });
    }
    for (const key of ["fromage", "notification_id", "my.google", "title"]) expect(isReservedDataKey(key)).toBe(false);
    expect(fcmData("[1]")).toEqual({ ok: false, reason: "InvalidData: not a JSON object" });
    expect(fcmData("{")).toEqual({ ok: false, reason: "InvalidData: not JSON" });
  });
});

describe("the client libraries' fixture (sdks/fixtures/push-payloads.json)", () => {
  it.each(pushPayloadCases("android"))("builds exactly its message: $name", (c) => {
    const data = fcmData(JSON.stringify(c.send.data));
    if (!data.ok) throw new Error(data.reason);
    const { token: _token, ...message } = fcmMessage("token", c.batch, c.rendered, data.data, undefined);
    expect(message).toEqual(c.message);
  });
});
