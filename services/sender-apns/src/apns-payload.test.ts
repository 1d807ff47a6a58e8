import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { DeliveryBatchSchema, type DeliveryBatch } from "@herald/proto/delivery";
import { describe, expect, it } from "vitest";
import { pushPayloadCases } from "../../../test/support/push-payload-fixtures.js";
import {
  buildNotification,
  collapseIdFor,
  DEFAULT_ALERT_OPTIONS,
  isDeviceToken,
  parseData,
  type BuildResult,
} from "./apns-payload.js";

const created = new Date("2026-11-22T10:00:00Z");

function batch(extra: Omit<MessageInitShape<typeof DeliveryBatchSchema>, "$typeName"> = {}): DeliveryBatch {
  return create(DeliveryBatchSchema, {
    campaignId: "c1",
    appId: "a1",
    platform: Platform.IOS,
    sequence: 1n,
    payloads: [{ index: 0, title: "Hello", body: "How are you?" }],
    targets: [],
    createdAt: timestampFromDate(created),
    ...extra,
  });
}

const text = { index: 0, title: "Hello", body: "How are you?" } as DeliveryBatch["payloads"][number];
const silent = { index: 0, title: "", body: "" } as DeliveryBatch["payloads"][number];

function ok(r: BuildResult) {
  if (!r.ok) throw new Error(`expected a notification, got ${r.reason}`);
  return {
    headers: r.notification.headers,
    body: JSON.parse(r.notification.body.toString()) as Record<string, unknown>,
  };
}

describe("buildNotification", () => {
  it("maps an alert: aps.alert, sound, data beside aps, priority 10", () => {
    const n = ok(
      buildNotification(batch(), text, { action_url: "https://example.com/a", n: 3 }, "com.example.app", {
        sound: "default",
      }),
    );
    expect(n.body).toEqual({
      action_url: "https://example.com/a",
      n: 3,
      herald_campaign_id: "c1",
      aps: { alert: { title: "Hello", body: "How are you?" }, sound: "default" },
    });
    expect(n.headers).toEqual({ "apns-topic": "com.example.app", "apns-push-type": "alert", "apns-priority": "10" });
  });

  it("carries badge and thread-id when given, and leaves out an empty title", () => {
    const n = ok(
      buildNotification(batch(), { ...text, title: "" }, {}, "com.example.app", { badge: 0, threadId: "news" }),
    );
    expect(n.body).toEqual({
      herald_campaign_id: "c1",
      aps: { alert: { body: "How are you?" }, badge: 0, "thread-id": "news" },
    });
  });

  it("sends data without text as a background push: content-available, priority 5, push type background", () => {
    const n = ok(
      buildNotification(batch({ highPriority: true }), silent, { sync: "inbox" }, "com.example.app", {
        sound: "default",
      }),
    );
    expect(n.body).toEqual({ sync: "inbox", herald_campaign_id: "c1", aps: { "content-available": 1 } });
    expect(n.headers).toMatchObject({ "apns-push-type": "background", "apns-priority": "5" });
  });

  it("refuses a send with neither text nor data", () => {
    expect(buildNotification(batch(), silent, {}, "com.example.app")).toEqual({
      ok: false,
      reason: "EmptyNotification",
    });
  });

  it("marks an alert with an image mutable and puts the URL beside aps", () => {
    const n = ok(
      buildNotification(batch({ imageUrl: "https://cdn.example.com/i.png" }), text, { image_url: "overridden" }, "t"),
    );
    expect(n.body).toEqual({
      image_url: "https://cdn.example.com/i.png",
      herald_campaign_id: "c1",
      aps: { alert: { title: "Hello", body: "How are you?" }, "mutable-content": 1 },
    });
  });

  it("sets apns-expiration to created_at + ttl, and leaves it out without a ttl", () => {
    const withTtl = ok(buildNotification(batch({ ttlSeconds: 3600 }), text, {}, "t"));
    expect(withTtl.headers["apns-expiration"]).toBe(String(created.getTime() / 1000 + 3600));
    expect(ok(buildNotification(batch(), text, {}, "t")).headers).not.toHaveProperty("apns-expiration");
  });

  it("sets apns-collapse-id, hashing one longer than 64 bytes", () => {
    expect(ok(buildNotification(batch({ collapseId: "news-1" }), text, {}, "t")).headers["apns-collapse-id"]).toBe(
      "news-1",
    );
    const long = "ü".repeat(40); // 40 characters, 80 bytes
    expect(collapseIdFor(long)).toMatch(/^[0-9a-f]{64}$/);
    expect(collapseIdFor("c".repeat(64))).toBe("c".repeat(64));
  });

  it("never lets a data key named aps replace the notification", () => {
    const n = ok(buildNotification(batch(), text, { aps: { alert: "spoofed" } }, "t"));
    expect(n.body.aps).toEqual({ alert: { title: "Hello", body: "How are you?" } });
  });

  it("carries the campaign's id beside aps in every push, and no data key replaces it", () => {
    const alert = ok(buildNotification(batch({ campaignId: "c2" }), text, { herald_campaign_id: "spoofed" }, "t"));
    expect(alert.body.herald_campaign_id).toBe("c2");
    const background = ok(buildNotification(batch({ campaignId: "c3" }), silent, { sync: 1 }, "t"));
    expect(background.body).toEqual({ sync: 1, herald_campaign_id: "c3", aps: { "content-available": 1 } });
  });

  it("fails payloads over 4096 bytes and accepts exactly 4096", () => {
    expect(buildNotification(batch(), text, { x: "y".repeat(5000) }, "t")).toEqual({
      ok: false,
      reason: "PayloadTooLarge",
    });
    const overhead = Buffer.byteLength(
      JSON.stringify({ x: "", herald_campaign_id: "c1", aps: { alert: { title: "Hello", body: "How are you?" } } }),
    );
    const exact = buildNotification(batch(), text, { x: "y".repeat(4096 - overhead) }, "t");
    expect(exact.ok && exact.notification.body.length).toBe(4096);
  });
});

describe("helpers", () => {
  it("parses data objects only", () => {
    expect(parseData("")).toEqual({});
    expect(parseData('{"a":"b"}')).toEqual({ a: "b" });
    expect(parseData("[1]")).toEqual({});
    expect(() => parseData("{")).toThrow();
  });

  it("accepts hex device tokens only (the token goes into the path)", () => {
    expect(isDeviceToken("ab".repeat(32))).toBe(true);
    expect(isDeviceToken("ab".repeat(50))).toBe(true);
    expect(isDeviceToken(`${"ab".repeat(31)}/x`)).toBe(false);
    expect(isDeviceToken("abc")).toBe(false);
    expect(isDeviceToken("")).toBe(false);
  });
});

describe("the client libraries' fixture (sdks/fixtures/push-payloads.json)", () => {
  it.each(pushPayloadCases("ios"))("builds exactly its payload: $name", (c) => {
    const n = ok(buildNotification(c.batch, c.rendered, c.send.data, "com.example.shop", DEFAULT_ALERT_OPTIONS));
    expect(n.body).toEqual(c.payload);
  });
});
