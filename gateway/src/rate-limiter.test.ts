import { describe, expect, it } from "vitest";
import { decide, uncounted } from "./rate-limiter.js";

const NOW = 1_795_000_000_123; // ms

describe("rate-limit headers", () => {
  it("counts down Remaining and sets Reset to the window's end in Unix seconds", () => {
    expect(decide(1000, { count: 1, ttlMs: 60_000 }, NOW)).toEqual({
      headers: {
        "x-ratelimit-limit": "1000",
        "x-ratelimit-remaining": "999",
        "x-ratelimit-reset": String(Math.ceil((NOW + 60_000) / 1000)),
      },
    });
    expect(decide(1000, { count: 1000, ttlMs: 12_500 }, NOW).headers["x-ratelimit-remaining"]).toBe("0");
    expect(decide(1000, { count: 1000, ttlMs: 12_500 }, NOW).retryAfterSeconds).toBeUndefined();
  });

  it("refuses beyond the limit with Retry-After rounded up", () => {
    const d = decide(1000, { count: 1001, ttlMs: 12_001 }, NOW);
    expect(d.headers["x-ratelimit-remaining"]).toBe("0");
    expect(d.retryAfterSeconds).toBe(13);
  });

  it("never says Retry-After 0, even at the window's last millisecond", () => {
    expect(decide(5, { count: 6, ttlMs: 0 }, NOW).retryAfterSeconds).toBe(1);
    expect(decide(5, { count: 6, ttlMs: -1 }, NOW).retryAfterSeconds).toBe(1);
  });

  it("keeps Reset consistent with Retry-After", () => {
    const nowMs = 1_795_000_000_900;
    const d = decide(1, { count: 2, ttlMs: 30_200 }, nowMs);
    expect(Number(d.headers["x-ratelimit-reset"])).toBe(Math.ceil((nowMs + 30_200) / 1000));
    expect(Number(d.headers["x-ratelimit-reset"]) * 1000).toBeGreaterThanOrEqual(nowMs + 30_200);
    expect(d.retryAfterSeconds).toBe(31);
  });

  it("shows a full window when the store is unreachable", () => {
    expect(uncounted(200, NOW)).toEqual({
      headers: {
        "x-ratelimit-limit": "200",
        "x-ratelimit-remaining": "200",
        "x-ratelimit-reset": String(Math.ceil((NOW + 60_000) / 1000)),
      },
    });
  });
});
