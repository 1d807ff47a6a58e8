import { describe, expect, it } from "vitest";
import { TtlCache } from "./ttl-cache.js";

describe("TtlCache", () => {
  it("expires entries after their TTL", () => {
    let now = 0;
    const cache = new TtlCache<string>(10, () => now);
    cache.set("a", "1", 100);
    now = 99;
    expect(cache.get("a")).toBe("1");
    now = 100;
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("evicts the oldest entry beyond its size", () => {
    const cache = new TtlCache<number>(2, () => 0);
    cache.set("a", 1, 1000);
    cache.set("b", 2, 1000);
    cache.set("a", 3, 1000); // refreshed: now the newest
    cache.set("c", 4, 1000);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(3);
    expect(cache.get("c")).toBe(4);
  });

  it("stores nothing with a zero TTL and drops matching values", () => {
    const cache = new TtlCache<{ id: string } | null>(10, () => 0);
    cache.set("zero", { id: "z" }, 0);
    expect(cache.get("zero")).toBeUndefined();
    cache.set("x", { id: "k1" }, 10);
    cache.set("y", { id: "k2" }, 10);
    cache.set("n", null, 10);
    cache.deleteWhere((v) => v?.id === "k1");
    expect(cache.get("x")).toBeUndefined();
    expect(cache.get("y")).toEqual({ id: "k2" });
    expect(cache.get("n")).toBeNull();
  });
});
