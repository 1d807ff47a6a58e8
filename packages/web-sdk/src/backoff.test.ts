import { describe, expect, it } from "vitest";
import { clientFixture } from "../../../test/support/client-fixtures.js";
import { isRetryable, RETRY, retryAfterMs, retryDelayMs } from "./backoff.js";

describe("retries of the web SDK", () => {
  it("retries network errors, 408, 429 and 5xx, and nothing else", () => {
    for (const status of [undefined, 408, 429, 500, 502, 503, 504]) expect(isRetryable(status), `${status}`).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 413, 415, 422]) expect(isRetryable(status), `${status}`).toBe(false);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-26T10:00:00Z");
    expect(retryAfterMs("7", now)).toBe(7_000);
    expect(retryAfterMs("Thu, 26 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(retryAfterMs("Thu, 26 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs("soon", now)).toBeUndefined();
  });

  it("waits with full jitter under an exponential cap of 5 minutes", () => {
    expect(retryDelayMs(0, undefined, () => 0.999)).toBeCloseTo(999, 0);
    expect(retryDelayMs(3, undefined, () => 0.5)).toBe(4_000);
    expect(retryDelayMs(30, undefined, () => 1)).toBe(RETRY.capMs);
    expect(retryDelayMs(5, undefined, () => 0)).toBe(0);
  });

  it("never retries before Retry-After, and spreads clients over 10 % more", () => {
    expect(retryDelayMs(0, 60_000, () => 0)).toBe(60_000);
    expect(retryDelayMs(0, 60_000, () => 1)).toBeCloseTo(66_000, 0);
  });
});

describe("the shared retry fixture (sdks/fixtures/retry.json)", () => {
  const retry = clientFixture("retry.json");

  it("has the web SDK's policy", () => {
    expect(retry.policy).toMatchObject({ base_ms: RETRY.baseMs, cap_ms: RETRY.capMs, max_attempts: RETRY.maxAttempts });
  });

  it("retries exactly the answers the fixture retries, with its Retry-After floors", () => {
    for (const c of retry.classify) {
      const status = c.status === null ? undefined : c.status;
      expect(isRetryable(status), JSON.stringify(c)).toBe(c.expect === "retry");
      if (c.retry_after !== undefined) {
        const now = c.now ? Date.parse(c.now) : Date.now();
        expect(retryAfterMs(c.retry_after, now), JSON.stringify(c)).toBe(c.floor_ms);
      }
    }
  });

  it("waits what the fixture's delays say", () => {
    for (const d of retry.delays) {
      expect(
        retryDelayMs(d.attempt, d.retry_after_ms ?? undefined, () => d.random),
        JSON.stringify(d),
      ).toBeCloseTo(d.expect_ms, 6);
    }
  });
});
