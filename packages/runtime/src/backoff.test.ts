import { describe, expect, it } from "vitest";
import { equalJitter, fullJitter, sleep } from "./backoff.js";

const backoff = { baseMs: 100, capMs: 1000 };

describe("fullJitter", () => {
  it("waits anywhere from 0 to base × 2^attempt", () => {
    expect(fullJitter(backoff, 0, () => 0)).toBe(0);
    expect(fullJitter(backoff, 0, () => 0.999_999)).toBe(100);
    expect(fullJitter(backoff, 1, () => 0.5)).toBe(100);
    expect(fullJitter(backoff, 2, () => 0.999_999)).toBe(400);
  });

  it("is capped, however many attempts", () => {
    expect(fullJitter(backoff, 4, () => 0.999_999)).toBe(1000);
    expect(fullJitter(backoff, 5_000, () => 0.999_999)).toBe(1000);
    for (let i = 0; i < 100; i++) {
      const wait = fullJitter(backoff, 20);
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThanOrEqual(1000);
    }
  });
});

describe("sleep", () => {
  it("resolves after the wait", async () => {
    const started = Date.now();
    await sleep(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it("rejects with the abort reason when aborted, at once when already aborted", async () => {
    const abort = new AbortController();
    const waiting = sleep(60_000, abort.signal);
    abort.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await expect(sleep(60_000, abort.signal)).rejects.toThrow("stop");
  });
});

describe("equalJitter", () => {
  it("waits between half the doubling ceiling and all of it", () => {
    const backoff = { baseMs: 100, capMs: 1000 };
    expect(equalJitter(backoff, 0, () => 0)).toBe(50);
    expect(equalJitter(backoff, 0, () => 0.999)).toBe(99);
    expect(equalJitter(backoff, 2, () => 0)).toBe(200);
    expect(equalJitter(backoff, 10, () => 0)).toBe(500);
    expect(equalJitter(backoff, 10, () => 0.999_999)).toBe(999);
  });
});
