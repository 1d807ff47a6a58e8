import { describe, expect, it } from "vitest";
import { checkContentEncoding, checkPushHeaders } from "./push-headers.js";

describe("checkPushHeaders", () => {
  it("accepts the RFC 8030 headers and records what was sent", () => {
    expect(checkPushHeaders({ ttl: "0" })).toEqual({ ok: true, value: { ttl: 0, urgency: null, topic: null } });
    expect(checkPushHeaders({ ttl: "2419200", urgency: "very-low", topic: "A".repeat(32) })).toEqual({
      ok: true,
      value: { ttl: 2419200, urgency: "very-low", topic: "A".repeat(32) },
    });
    for (const urgency of ["very-low", "low", "normal", "high"])
      expect(checkPushHeaders({ ttl: "60", urgency }).ok).toBe(true);
    expect(checkPushHeaders({ ttl: "60", topic: "news_update-1" }).ok).toBe(true);
  });

  it("requires TTL as a non-negative integer", () => {
    const reason = (ttl: string | string[] | undefined) => {
      const r = checkPushHeaders({ ttl });
      return r.ok ? "ok" : `${r.refusal.status} ${r.refusal.reason}`;
    };
    expect(reason(undefined)).toBe("400 MissingTTL");
    for (const bad of ["", "-1", "1.5", "60s", " 60", "60, 60", "1e3", "99999999999999999999"]) {
      expect(reason(bad), bad).toBe("400 InvalidTTL");
    }
    expect(reason(["60", "60"])).toBe("400 InvalidTTL");
  });

  it("refuses an unknown Urgency", () => {
    for (const urgency of ["", "urgent", "HIGH", "Normal", "very low", "high, low"]) {
      expect(checkPushHeaders({ ttl: "60", urgency }), urgency).toEqual({
        ok: false,
        refusal: { status: 400, reason: "InvalidUrgency" },
      });
    }
  });

  it("refuses a Topic longer than 32 characters or outside base64url", () => {
    for (const topic of ["", "A".repeat(33), "has space", "slash/", "plus+", "pad=", "ünï"]) {
      expect(checkPushHeaders({ ttl: "60", topic }), topic).toEqual({
        ok: false,
        refusal: { status: 400, reason: "InvalidTopic" },
      });
    }
  });
});

describe("checkContentEncoding", () => {
  it("accepts aes128gcm, or no coding for an empty message", () => {
    expect(checkContentEncoding("aes128gcm", 100).ok).toBe(true);
    expect(checkContentEncoding("AES128GCM", 100).ok).toBe(true);
    expect(checkContentEncoding(undefined, 0).ok).toBe(true);
  });

  it("refuses anything else with 415", () => {
    for (const value of [undefined, "aesgcm", "gzip", "aes128gcm, gzip"]) {
      expect(checkContentEncoding(value, 100), String(value)).toEqual({
        ok: false,
        refusal: { status: 415, reason: "UnsupportedContentEncoding" },
      });
    }
  });
});
