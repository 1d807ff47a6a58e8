import { describe, expect, it } from "vitest";
import { BoundedCache } from "./bounded-cache.js";

/** A load that resolves or rejects when the test says so, counting its calls. */
function gated<V>() {
  let calls = 0;
  let settle: { resolve: (v: V) => void; reject: (e: unknown) => void } | undefined;
  return {
    load: () => {
      calls++;
      return new Promise<V>((resolve, reject) => (settle = { resolve, reject }));
    },
    resolve: (v: V) => settle?.resolve(v),
    reject: (e: unknown) => settle?.reject(e),
    calls: () => calls,
  };
}

describe("BoundedCache", () => {
  it("expires entries after their TTL, by the injected clock", () => {
    let now = 0;
    const cache = new BoundedCache<string>({ maxEntries: 10, ttlMs: 100, now: () => now });
    cache.set("a", "1");
    now = 99;
    expect(cache.peek("a")).toBe("1");
    now = 100;
    expect(cache.peek("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("evicts the entry stored longest ago beyond its bound", () => {
    const cache = new BoundedCache<number>({ maxEntries: 2, ttlMs: 1000, now: () => 0 });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("a", 3); // stored again: now the newest
    cache.peek("b"); // reading does not make it newer
    cache.set("c", 4);
    expect(cache.size).toBe(2);
    expect(cache.peek("b")).toBeUndefined();
    expect(cache.peek("a")).toBe(3);
    expect(cache.peek("c")).toBe(4);
  });

  it("stores nothing with a zero TTL or a zero bound, and drops matching values", () => {
    const cache = new BoundedCache<{ id: string } | null>({ maxEntries: 10, ttlMs: 10, now: () => 0 });
    cache.set("zero", { id: "z" }, 0);
    expect(cache.peek("zero")).toBeUndefined();
    cache.set("x", { id: "k1" });
    cache.set("y", { id: "k2" });
    cache.set("n", null);
    cache.deleteWhere((v) => v?.id === "k1");
    expect(cache.peek("x")).toBeUndefined();
    expect(cache.peek("y")).toEqual({ id: "k2" });
    expect(cache.peek("n")).toBeNull();
    const none = new BoundedCache<number>({ maxEntries: 0, ttlMs: 10 });
    none.set("a", 1);
    expect(none.size).toBe(0);
  });

  it("keeps each value for the TTL it names, e.g. a token's own expiry minus a margin", async () => {
    let now = 1_000;
    const cache = new BoundedCache<{ token: string; expiresAt: number }>({
      maxEntries: 10,
      ttlMs: (t) => t.expiresAt - 30 - now,
      now: () => now,
    });
    await cache.get("short", async () => ({ token: "s", expiresAt: now + 100 }));
    await cache.get("long", async () => ({ token: "l", expiresAt: now + 1_000 }));
    await cache.get("spent", async () => ({ token: "x", expiresAt: now + 10 }));
    now += 69;
    expect(cache.peek("short")?.token).toBe("s");
    expect(cache.peek("spent")).toBeUndefined();
    now += 1;
    expect(cache.peek("short")).toBeUndefined();
    expect(cache.peek("long")?.token).toBe("l");
  });

  it("makes concurrent gets of a missing key share one load", async () => {
    const cache = new BoundedCache<string>({ maxEntries: 10, ttlMs: 1000, now: () => 0 });
    const loader = gated<string>();
    const all = Promise.all(Array.from({ length: 50 }, () => cache.get("k", loader.load)));
    loader.resolve("v");
    expect(new Set(await all)).toEqual(new Set(["v"]));
    expect(await cache.get("k", loader.load)).toBe("v");
    expect(loader.calls()).toBe(1);
  });

  it("does not cache a failed load: every waiter sees the error, the next get loads again", async () => {
    const cache = new BoundedCache<string>({ maxEntries: 10, ttlMs: 1000, now: () => 0 });
    const loader = gated<string>();
    const waiters = Promise.allSettled([cache.get("k", loader.load), cache.get("k", loader.load)]);
    loader.reject(new Error("down"));
    expect((await waiters).map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(cache.size).toBe(0);
    expect(await cache.get("k", async () => "up")).toBe("up");
    expect(loader.calls()).toBe(1);
  });

  it("refreshes a fresh key on demand, keeping the stored value when the refresh fails", async () => {
    const cache = new BoundedCache<string>({ maxEntries: 10, ttlMs: 1000, now: () => 0 });
    cache.set("k", "old");
    await expect(cache.refresh("k", async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(cache.peek("k")).toBe("old");
    const loader = gated<string>();
    const both = Promise.all([cache.refresh("k", loader.load), cache.refresh("k", loader.load)]);
    expect(await cache.get("k", loader.load)).toBe("old"); // fresh: no load
    loader.resolve("new");
    expect(await both).toEqual(["new", "new"]);
    expect(cache.peek("k")).toBe("new");
    expect(loader.calls()).toBe(1);
  });
});
