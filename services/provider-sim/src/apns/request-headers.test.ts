import { describe, expect, it } from "vitest";
import {
  checkApnsHeaders,
  checkApnsId,
  checkTopicForKey,
  effectivePushType,
  hasDuplicateHeader,
  topicSuffix,
} from "./request-headers.js";

const reason = (r: { ok: boolean; refusal?: { status: number; reason: string } }) =>
  r.ok ? "ok" : `${r.refusal!.status} ${r.refusal!.reason}`;
const headers = (extra: Record<string, string | string[] | undefined>) =>
  checkApnsHeaders({ "apns-topic": "com.example.app", ...extra });

describe("hasDuplicateHeader", () => {
  it("finds any header name sent twice, in any case, except cookie", () => {
    expect(hasDuplicateHeader([":method", "POST", "apns-topic", "a", "apns-priority", "10"])).toBe(false);
    expect(hasDuplicateHeader(["apns-topic", "a", "APNS-TOPIC", "a"])).toBe(true);
    expect(hasDuplicateHeader(["authorization", "bearer x", "authorization", "bearer y"])).toBe(true);
    expect(hasDuplicateHeader(["cookie", "a=1", "cookie", "b=2"])).toBe(false);
  });
});

describe("checkApnsId", () => {
  it("accepts absence or a lowercase canonical UUID", () => {
    expect(checkApnsId(undefined)).toEqual({ ok: true, value: null });
    expect(checkApnsId("123e4567-e89b-12d3-a456-4266554400a0")).toEqual({
      ok: true,
      value: "123e4567-e89b-12d3-a456-4266554400a0",
    });
  });

  it("refuses uppercase, braces, missing hyphens and garbage with BadMessageId", () => {
    for (const id of [
      "123E4567-E89B-12D3-A456-4266554400A0",
      "{123e4567-e89b-12d3-a456-4266554400a0}",
      "123e4567e89b12d3a4564266554400a0",
      "x",
      "",
    ]) {
      expect(reason(checkApnsId(id)), id).toBe("400 BadMessageId");
    }
  });
});

describe("checkApnsHeaders", () => {
  it("reads the headers and applies APNs defaults", () => {
    expect(headers({})).toEqual({
      ok: true,
      value: { topic: "com.example.app", pushType: null, priority: 10, expiration: null, collapseId: null },
    });
    expect(
      headers({
        "apns-push-type": "alert",
        "apns-priority": "5",
        "apns-expiration": "0",
        "apns-collapse-id": "c".repeat(64),
      }),
    ).toEqual({
      ok: true,
      value: { topic: "com.example.app", pushType: "alert", priority: 5, expiration: 0, collapseId: "c".repeat(64) },
    });
  });

  it("needs a topic that looks like a bundle id", () => {
    expect(reason(checkApnsHeaders({}))).toBe("400 MissingTopic");
    for (const topic of ["", "has space", ".leading", "com/example", "ü.app"])
      expect(reason(headers({ "apns-topic": topic })), topic).toBe("400 BadTopic");
  });

  it("knows Apple's push types only", () => {
    for (const t of [
      "alert",
      "background",
      "location",
      "voip",
      "complication",
      "fileprovider",
      "mdm",
      "liveactivity",
      "pushtotalk",
      "widgets",
    ]) {
      expect(reason(headers({ "apns-push-type": t, "apns-priority": "5" })), t).toBe("ok");
    }
    for (const t of ["Alert", "silent", "", "controls "])
      expect(reason(headers({ "apns-push-type": t })), t).toBe("400 InvalidPushType");
  });

  it("takes priorities 10, 5 and 1; background pushes must use 5 (10 is the default)", () => {
    for (const p of ["0", "2", "high", "10 ", "05"])
      expect(reason(headers({ "apns-priority": p })), p).toBe("400 BadPriority");
    expect(reason(headers({ "apns-push-type": "background" }))).toBe("400 BadPriority");
    expect(reason(headers({ "apns-push-type": "background", "apns-priority": "10" }))).toBe("400 BadPriority");
    expect(reason(headers({ "apns-push-type": "background", "apns-priority": "1" }))).toBe("400 BadPriority");
    expect(reason(headers({ "apns-push-type": "background", "apns-priority": "5" }))).toBe("ok");
  });

  it("needs apns-expiration as UNIX seconds", () => {
    expect(reason(headers({ "apns-expiration": "1800000000" }))).toBe("ok");
    for (const e of ["-1", "1.5", "soon", "", "18000000000", " 1"])
      expect(reason(headers({ "apns-expiration": e })), e).toBe("400 BadExpirationDate");
  });

  it("limits apns-collapse-id to 64 bytes, counted in UTF-8", () => {
    expect(reason(headers({ "apns-collapse-id": "é".repeat(32) }))).toBe("ok");
    expect(reason(headers({ "apns-collapse-id": "é".repeat(33) }))).toBe("400 BadCollapseId");
    expect(reason(headers({ "apns-collapse-id": "c".repeat(65) }))).toBe("400 BadCollapseId");
    expect(reason(headers({ "apns-collapse-id": "" }))).toBe("400 BadCollapseId");
  });
});

describe("topics", () => {
  const keyTopics = new Set(["com.example.app"]);

  it("finds push-type suffixes", () => {
    expect(topicSuffix("com.example.app")).toBe("");
    expect(topicSuffix("com.example.app.voip")).toBe(".voip");
    expect(topicSuffix("com.example.app.voip-ptt")).toBe(".voip-ptt");
    expect(topicSuffix("com.example.app.push-type.liveactivity")).toBe(".push-type.liveactivity");
    expect(topicSuffix(".voip")).toBe("");
  });

  it("allows the key's bundle ids, bare or suffixed, and refuses other apps with TopicDisallowed", () => {
    expect(reason(checkTopicForKey("com.example.app", "alert", keyTopics))).toBe("ok");
    expect(reason(checkTopicForKey("com.example.app.voip", "voip", keyTopics))).toBe("ok");
    expect(reason(checkTopicForKey("com.example.app.complication", null, keyTopics))).toBe("ok");
    expect(reason(checkTopicForKey("com.other.app", "alert", keyTopics))).toBe("400 TopicDisallowed");
    expect(reason(checkTopicForKey("com.other.app.voip", "voip", keyTopics))).toBe("400 TopicDisallowed");
  });

  it("refuses a push type whose required suffix the topic lacks, or the other way round, with InvalidPushType", () => {
    expect(reason(checkTopicForKey("com.example.app", "voip", keyTopics))).toBe("400 InvalidPushType");
    expect(reason(checkTopicForKey("com.example.app.voip", "alert", keyTopics))).toBe("400 InvalidPushType");
    expect(reason(checkTopicForKey("com.example.app.voip", "background", keyTopics))).toBe("400 InvalidPushType");
    expect(reason(checkTopicForKey("com.example.app.location-query", "location", keyTopics))).toBe("ok");
    expect(reason(checkTopicForKey("com.example.app", "mdm", keyTopics))).toBe("ok");
  });

  it("infers the push type from the topic when the header is absent", () => {
    const h = (topic: string, pushType: null | "alert" = null) => ({
      topic,
      pushType,
      priority: 10 as const,
      expiration: null,
      collapseId: null,
    });
    expect(effectivePushType(h("com.example.app.voip"))).toBe("voip");
    expect(effectivePushType(h("com.example.app"))).toBeNull();
    expect(effectivePushType(h("com.example.app", "alert"))).toBe("alert");
  });
});
