import { describe, expect, it } from "vitest";
import { Limiter } from "./limiter.js";

describe("Limiter", () => {
  it("holds at most size at once and serves thousands of waiters in order, across queue compactions", async () => {
    const limiter = new Limiter(3);
    const served: number[] = [];
    let holding = 0;
    let most = 0;
    const n = 5_000;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        limiter.run(async () => {
          holding++;
          most = Math.max(most, holding);
          served.push(i);
          await Promise.resolve();
          holding--;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(served).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(limiter.available).toBe(3);
  });

  it("hands a released slot to the next waiter, and frees it when nobody waits", async () => {
    const limiter = new Limiter(1);
    await limiter.acquire();
    let second = false;
    const waiting = limiter.acquire().then(() => {
      second = true;
    });
    expect(limiter.available).toBe(0);
    limiter.release();
    await waiting;
    expect(second).toBe(true);
    expect(limiter.available).toBe(0);
    limiter.release();
    expect(limiter.available).toBe(1);
  });
});
