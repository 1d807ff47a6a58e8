import { describe, expect, it } from "vitest";
import { Limiter } from "./limiter.js";

/** Lets every promise continuation that is ready run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

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

  it("resize: a larger size lets waiters in at once, a smaller one admits nobody until holders left", async () => {
    const limiter = new Limiter(2);
    await limiter.acquire();
    await limiter.acquire();
    let admitted = 0;
    const waiting = Array.from({ length: 4 }, () => limiter.acquire().then(() => admitted++));
    limiter.resize(4);
    await settled();
    expect(admitted).toBe(2);
    expect(limiter.holders).toBe(4);
    limiter.resize(1);
    // Three releases only take places away; the fourth hands one to a waiter.
    for (let i = 0; i < 3; i++) limiter.release();
    await settled();
    expect(admitted).toBe(2);
    expect(limiter.holders).toBe(1);
    limiter.release();
    await settled();
    expect(admitted).toBe(3);
    expect(limiter.holders).toBe(1);
    expect(limiter.available).toBe(0);
    limiter.resize(2);
    await Promise.all(waiting);
    expect(admitted).toBe(4);
  });
});
