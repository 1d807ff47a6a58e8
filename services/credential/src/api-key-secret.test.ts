import { createHash, timingSafeEqual } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { displayPrefix, generateSecret, hashSecret, isWellFormedSecret, secretMatches } from "./api-key-secret.js";

// The real timingSafeEqual, watched: the test below checks that digests go through it.
vi.mock("node:crypto", async (importOriginal) => {
  const crypto = await importOriginal<typeof import("node:crypto")>();
  return { ...crypto, timingSafeEqual: vi.fn(crypto.timingSafeEqual) };
});

describe("API key secrets", () => {
  it("generates hk_live_ and 40 base62 characters", () => {
    for (let i = 0; i < 200; i++) {
      const secret = generateSecret();
      expect(secret).toMatch(/^hk_live_[A-Za-z0-9]{40}$/);
      expect(isWellFormedSecret(secret)).toBe(true);
    }
  });

  it("generates hk_pub_ and 40 base62 characters for client keys, shown as hk_pub_ and 4 more", () => {
    for (let i = 0; i < 50; i++) {
      const secret = generateSecret("client");
      expect(secret).toMatch(/^hk_pub_[A-Za-z0-9]{40}$/);
      expect(isWellFormedSecret(secret)).toBe(true);
      expect(displayPrefix(secret)).toBe(secret.slice(0, 11));
    }
  });

  it("never repeats and uses the whole alphabet about evenly", () => {
    const counts = new Map<string, number>();
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const secret = generateSecret();
      seen.add(secret);
      for (const c of secret.slice(8)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(seen.size).toBe(2_000);
    expect(counts.size).toBe(62);
    // 80,000 characters over 62 symbols: about 1,290 each; bias from `% 62` would push
    // the first eight symbols to about 1.25 times that.
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(1_100);
      expect(n).toBeLessThan(1_500);
    }
  });

  it("recognises well-formed secrets only", () => {
    expect(isWellFormedSecret(`hk_live_${"a".repeat(32)}`)).toBe(true);
    expect(isWellFormedSecret(`hk_live_${"a".repeat(31)}`)).toBe(false);
    expect(isWellFormedSecret(`hk_test_${"a".repeat(40)}`)).toBe(false);
    expect(isWellFormedSecret(`hk_pub_${"a".repeat(32)}`)).toBe(true);
    expect(isWellFormedSecret(`hk_pub_${"a".repeat(31)}`)).toBe(false);
    expect(isWellFormedSecret(`hk_publ_${"a".repeat(40)}`)).toBe(false);
    expect(isWellFormedSecret(`hk_live_${"a".repeat(39)}!`)).toBe(false);
    expect(isWellFormedSecret("")).toBe(false);
  });

  it("hashes with SHA-256 and shows only the first 12 characters", () => {
    const secret = generateSecret();
    expect(hashSecret(secret).toString("hex")).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(hashSecret(secret)).toHaveLength(32);
    expect(displayPrefix(secret)).toBe(secret.slice(0, 12));
    expect(displayPrefix(secret)).toMatch(/^hk_live_[A-Za-z0-9]{4}$/);
  });

  it("confirms a stored hash with timingSafeEqual on two 32-byte digests, never a plain comparison", () => {
    const spy = vi.mocked(timingSafeEqual);
    spy.mockClear();
    const secret = generateSecret();
    const other = generateSecret();
    expect(secretMatches(secret, hashSecret(secret))).toBe(true);
    expect(secretMatches(other, hashSecret(secret))).toBe(false);
    expect(spy).toHaveBeenCalledTimes(2);
    for (const [a, b] of spy.mock.calls) {
      expect(Buffer.isBuffer(a) && Buffer.isBuffer(b)).toBe(true);
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
    // A stored value of another length is no match and is not compared (timingSafeEqual would throw).
    expect(secretMatches(secret, hashSecret(secret).subarray(0, 16))).toBe(false);
    expect(spy).toHaveBeenCalledTimes(2);
  });
});
