import { describe, expect, it } from "vitest";
import { DeviceRateLimiter } from "./devices.js";
import { checkPayload, payloadLimit } from "./payload.js";
import type { PushType } from "./request-headers.js";

const reason = (body: string, pushType: PushType | null = null) => {
  const r = checkPayload(Buffer.from(body), pushType);
  return r.ok ? "ok" : `${r.refusal.status} ${r.refusal.reason}`;
};

describe("checkPayload", () => {
  it("needs a JSON object with an aps object", () => {
    expect(reason('{"aps":{"alert":"hi"},"custom":1}')).toBe("ok");
    expect(reason('{"aps":{}}')).toBe("ok");
    for (const body of [
      "",
      "not json",
      "[]",
      '"aps"',
      "{}",
      '{"aps":1}',
      '{"aps":[]}',
      '{"aps":null}',
      '{"custom":{"alert":"x"}}',
    ]) {
      expect(reason(body), body).toBe("400 PayloadEmpty");
    }
  });

  it("needs an alert, badge or sound in an alert push", () => {
    expect(reason('{"aps":{"alert":{"title":"t","body":"b"}}}', "alert")).toBe("ok");
    expect(reason('{"aps":{"badge":3}}', "alert")).toBe("ok");
    expect(reason('{"aps":{"sound":"default"}}', "alert")).toBe("ok");
    expect(reason('{"aps":{"content-available":1}}', "alert")).toBe("400 InvalidPushType");
    expect(reason('{"aps":{}}', "alert")).toBe("400 InvalidPushType");
  });

  it("needs content-available: 1 in a background push", () => {
    expect(reason('{"aps":{"content-available":1},"k":"v"}', "background")).toBe("ok");
    expect(reason('{"aps":{"content-available":"1"}}', "background")).toBe("400 InvalidPushType");
    expect(reason('{"aps":{"alert":"x"}}', "background")).toBe("400 InvalidPushType");
  });

  it("allows 5120 bytes for voip and 4096 otherwise", () => {
    expect(payloadLimit("voip")).toBe(5120);
    expect(payloadLimit("alert")).toBe(4096);
    expect(payloadLimit(null)).toBe(4096);
  });
});

describe("DeviceRateLimiter", () => {
  it("lets a burst through, then refills at the rate", () => {
    const limiter = new DeviceRateLimiter(3, 2);
    expect([0, 0, 0, 0].map((t) => limiter.take("d", t))).toEqual([true, true, true, false]);
    expect(limiter.take("other", 0)).toBe(true);
    expect(limiter.take("d", 400)).toBe(false);
    expect(limiter.take("d", 500)).toBe(true);
    expect(limiter.take("d", 5_000)).toBe(true);
  });

  it("never refills at rate 0", () => {
    const limiter = new DeviceRateLimiter(1, 0);
    expect(limiter.take("d", 0)).toBe(true);
    expect(limiter.take("d", 1e9)).toBe(false);
  });

  it("prunes only devices whose buckets are full again", () => {
    const limiter = new DeviceRateLimiter(1, 1, 2);
    limiter.take("a", 0);
    limiter.take("b", 0);
    limiter.take("c", 10_000);
    expect(limiter.take("c", 10_000)).toBe(false);
    expect(limiter.take("a", 10_000)).toBe(true);
  });
});
