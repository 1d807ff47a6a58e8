import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { uniqueName } from "../../test/support/unique.js";
import { waitUntil } from "../../test/support/wait.js";
import { decide, RateLimiter } from "../src/rate-limiter.js";

/**
 * Two limiters on two Redis connections stand for two gateway replicas: together they
 * must count one key's requests exactly, whichever replica a request reaches.
 */
describe("rate limiter across replicas", () => {
  const infra = inject("infra");
  const prefix = `${uniqueName("gwtest")}:`;
  let replicaA: Redis;
  let replicaB: Redis;

  beforeAll(() => {
    replicaA = new Redis(infra.redisUrl);
    replicaB = new Redis(infra.redisUrl);
  });

  afterAll(async () => {
    const keys = await replicaA.keys(`${prefix}*`);
    if (keys.length > 0) await replicaA.del(...keys);
    replicaA.disconnect();
    replicaB.disconnect();
  });

  it("allows exactly the limit, with Remaining counting down 999..0, then refuses", async () => {
    const limiters = [new RateLimiter(replicaA, prefix), new RateLimiter(replicaB, prefix)];
    const limit = 1000;
    const resets = new Set<string>();
    for (let i = 0; i < limit; i++) {
      const now = Date.now();
      const counted = await limiters[i % 2]!.hit("key:sequential");
      const d = decide(limit, counted, now);
      expect(d.headers["x-ratelimit-limit"]).toBe("1000");
      expect(d.headers["x-ratelimit-remaining"]).toBe(String(limit - 1 - i));
      expect(d.retryAfterSeconds).toBeUndefined();
      resets.add(d.headers["x-ratelimit-reset"]);
    }
    const now = Date.now();
    const counted = await limiters[1]!.hit("key:sequential");
    const refused = decide(limit, counted, now);
    expect(counted.count).toBe(1001);
    expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    // One window: Reset is its end (±1 s of rounding across the run), and Retry-After agrees.
    const reset = Number(refused.headers["x-ratelimit-reset"]);
    expect(Math.max(...[...resets].map(Number)) - Math.min(...[...resets].map(Number))).toBeLessThanOrEqual(1);
    expect(reset - Math.ceil(now / 1000)).toBeLessThanOrEqual(refused.retryAfterSeconds!);
    expect([...resets].map(Number)).toContain(reset);
  });

  it("counts concurrent requests on both replicas without gaps or duplicates", async () => {
    const limiters = [new RateLimiter(replicaA, prefix), new RateLimiter(replicaB, prefix)];
    const results = await Promise.all(Array.from({ length: 1001 }, (_, i) => limiters[i % 2]!.hit("key:concurrent")));
    const now = Date.now();
    const decisions = results.map((r) => decide(1000, r, now));
    const allowed = decisions.filter((d) => d.retryAfterSeconds === undefined);
    expect(allowed).toHaveLength(1000);
    const remaining = allowed.map((d) => Number(d.headers["x-ratelimit-remaining"])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    const refused = decisions.filter((d) => d.retryAfterSeconds !== undefined);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.headers["x-ratelimit-remaining"]).toBe("0");
  });

  it("starts the window at the first request and a new one after it ends", async () => {
    const limiter = new RateLimiter(replicaA, prefix, 1_000, 300);
    expect((await limiter.hit("key:short")).count).toBe(1);
    const second = await limiter.hit("key:short");
    expect(second.count).toBe(2);
    expect(second.ttlMs).toBeGreaterThan(0);
    expect(second.ttlMs).toBeLessThanOrEqual(300);
    // The window is the counter's TTL in Redis: wait for Redis to expire it.
    await waitUntil(
      "the window to end",
      async () => (await replicaA.exists(`${prefix}ratelimit:key:short`)) === 0,
      2_000,
      20,
    );
    expect((await limiter.hit("key:short")).count).toBe(1);
  });

  it("recovers from a flushed script cache (EVALSHA falls back to EVAL)", async () => {
    const limiter = new RateLimiter(replicaB, prefix);
    await limiter.hit("key:script");
    await replicaB.script("FLUSH");
    expect((await limiter.hit("key:script")).count).toBe(2);
  });

  it("heals a counter that lost its expiry", async () => {
    await replicaA.set(`${prefix}ratelimit:key:noexpiry`, "5");
    const counted = await new RateLimiter(replicaA, prefix).hit("key:noexpiry");
    expect(counted.count).toBe(6);
    expect(counted.ttlMs).toBe(60_000);
    expect(await replicaA.pttl(`${prefix}ratelimit:key:noexpiry`)).toBeGreaterThan(0);
  });

  it("fails within its timeout when Redis does not answer", async () => {
    const dead = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      retryStrategy: () => 50,
    });
    dead.on("error", () => undefined);
    void dead.connect().catch(() => undefined);
    const started = Date.now();
    await expect(new RateLimiter(dead, prefix, 200).hit("key:dead")).rejects.toThrow(/did not answer/);
    expect(Date.now() - started).toBeLessThan(1_000);
    dead.disconnect();
  });
});
