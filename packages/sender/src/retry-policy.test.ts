import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY, nextDelay, parseRetryAfter, type RetryPolicy } from "./retry-policy.js";

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxElapsedMs: 5000 };

describe("nextDelay", () => {
  it("grows exponentially with jitter in the upper half", () => {
    expect(nextDelay(policy, 1, 0, undefined, () => 0)).toBe(50);
    expect(nextDelay(policy, 1, 0, undefined, () => 0.999)).toBe(99);
    expect(nextDelay(policy, 2, 0, undefined, () => 0)).toBe(100);
    expect(nextDelay(policy, 3, 0, undefined, () => 0)).toBe(200);
  });

  it("is capped by maxDelayMs", () => {
    const p = { ...policy, maxAttempts: 20 };
    expect(nextDelay(p, 15, 0, undefined, () => 0.999)).toBeLessThanOrEqual(1000);
  });

  it("never waits less than Retry-After", () => {
    expect(nextDelay(policy, 1, 0, 3000, () => 0)).toBe(3000);
  });

  it("stops after maxAttempts or past maxElapsedMs", () => {
    expect(nextDelay(policy, 4, 0, undefined)).toBeUndefined();
    expect(nextDelay(policy, 1, 4990, undefined, () => 0.5)).toBeUndefined();
    expect(nextDelay(policy, 1, 0, 6000)).toBeUndefined();
  });

  it("has sane defaults", () => {
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBeGreaterThan(1);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("7")).toBe(7000);
    const now = Date.parse("2026-11-22T00:00:00Z");
    expect(parseRetryAfter("Sun, 22 Nov 2026 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
