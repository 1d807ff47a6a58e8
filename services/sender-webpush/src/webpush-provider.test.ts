import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { PushTransport } from "./push-transport.js";
import { VapidSigner } from "./vapid.js";
import { classify, topicFor, WebPushProvider } from "./webpush-provider.js";

describe("classify", () => {
  const res = (status: number, headers: Record<string, string> = {}) => ({ status, headers });

  it("maps push service answers to outcomes", () => {
    expect(classify(res(201))).toEqual({ kind: "delivered" });
    expect(classify(res(410))).toMatchObject({ kind: "bounced", reason: "Gone" });
    expect(classify(res(404))).toMatchObject({ kind: "bounced", reason: "NotFound" });
    expect(classify(res(429, { "retry-after": "7" }))).toEqual({
      kind: "retry",
      reason: "TooManyRequests",
      throttled: true,
      retryAfterMs: 7000,
    });
    expect(classify(res(503))).toMatchObject({ kind: "retry", reason: "ServerError:503" });
    expect(classify(res(413))).toEqual({ kind: "failed", reason: "PayloadTooLarge" });
    expect(classify(res(403))).toEqual({ kind: "failed", reason: "VapidRejected:403" });
    expect(classify(res(400))).toEqual({ kind: "failed", reason: "Rejected:400" });
  });
});

describe("topicFor", () => {
  it("keeps a valid topic and hashes anything else into 32 base64url chars", () => {
    expect(topicFor("news-1")).toBe("news-1");
    const hashed = topicFor("a collapse id with spaces and more than thirty-two characters");
    expect(hashed).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(topicFor("a collapse id with spaces and more than thirty-two characters")).toBe(hashed);
  });
});

describe("metrics", () => {
  it("tell which key agreement encrypts: the native addon, once built", async () => {
    const registry = new Registry();
    new WebPushProvider({} as PushTransport, new VapidSigner(), {
      allowPrivate: false,
      allowedHosts: [],
    }).registerMetrics(registry);
    expect(await registry.metrics()).toContain('herald_webpush_key_agreement{implementation="native"} 1');
  });
});
