import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { ProviderTokens, type Signer, type SigningKey } from "./provider-token.js";

const MIN = 60_000;

function key(keyId = "KEY1234567"): SigningKey {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return { teamId: "TEAM123456", keyId, privateKey, fingerprint: `fp-${keyId}` };
}

/** A clock the test moves, and a signer that counts (and can be slow, to overlap callers). */
function setup(opts: { delayMs?: number } = {}) {
  let now = Date.parse("2026-11-22T10:00:00Z");
  const signed: number[] = [];
  const sign: Signer = async (_key, iat) => {
    signed.push(now);
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    return `jwt-${iat}-${signed.length}`;
  };
  const tokens = new ProviderTokens({ now: () => now, sign });
  return { tokens, signed, advance: (ms: number) => (now += ms) };
}

describe("ProviderTokens", () => {
  it("signs a real ES256 JWT with kid, iss and iat that the key's public half verifies", async () => {
    const k = key();
    const { jwt } = await new ProviderTokens().get(k);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: "ES256", kid: "KEY1234567" });
    const { payload } = await jwtVerify(jwt, createPublicKey(k.privateKey));
    expect(payload.iss).toBe("TEAM123456");
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(5);
  });

  it("reuses one token across thousands of sends and refreshes it after 50 minutes", async () => {
    const { tokens, signed, advance } = setup();
    const k = key();
    const first = (await tokens.get(k)).jwt;
    for (let i = 0; i < 5_000; i++) {
      expect((await tokens.get(k)).jwt).toBe(first);
      advance(500); // 5000 sends over ~42 minutes
    }
    expect(signed).toHaveLength(1);
    advance(9 * MIN);
    const second = (await tokens.get(k)).jwt;
    expect(second).not.toBe(first);
    expect(signed).toHaveLength(2);
    expect(signed[1]! - signed[0]!).toBeGreaterThanOrEqual(20 * MIN);
    expect(signed[1]! - signed[0]!).toBeLessThan(60 * MIN);
  });

  it("signs once for many concurrent callers", async () => {
    const { tokens, signed } = setup({ delayMs: 20 });
    const k = key();
    const all = await Promise.all(Array.from({ length: 500 }, () => tokens.get(k)));
    expect(new Set(all.map((t) => t.jwt)).size).toBe(1);
    expect(signed).toHaveLength(1);
  });

  it("keeps one token per key", async () => {
    const { tokens, signed } = setup();
    const a = await tokens.get(key("AAAAAAAAAA"));
    const b = await tokens.get(key("BBBBBBBBBB"));
    expect(a.jwt).not.toBe(b.jwt);
    expect(signed).toHaveLength(2);
  });

  it("refreshes an expired token at once, but never twice within 20 minutes", async () => {
    const { tokens, signed, advance } = setup();
    const k = key();
    const t1 = (await tokens.get(k)).jwt;
    advance(25 * MIN);
    expect(tokens.expired(k, t1)).toBe(true); // 25 min old: re-sign
    const t2 = (await tokens.get(k)).jwt;
    expect(t2).not.toBe(t1);
    expect(tokens.expired(k, t1)).toBe(true); // stale report: a newer token exists already
    expect((await tokens.get(k)).jwt).toBe(t2);
    advance(5 * MIN);
    expect(tokens.expired(k, t2)).toBe(false); // 5 min old: our clock is wrong, not the token
    expect((await tokens.get(k)).jwt).toBe(t2);
    expect(signed).toHaveLength(2);
    // Whatever the timing of expiry reports, signatures are 20+ minutes apart.
    for (let i = 0; i < 200; i++) {
      advance(MIN);
      const t = (await tokens.get(k)).jwt;
      tokens.expired(k, t);
    }
    for (let i = 1; i < signed.length; i++) expect(signed[i]! - signed[i - 1]!).toBeGreaterThanOrEqual(20 * MIN);
  });

  it("remembers a rejected token for a minute so sends fail fast, then asks APNs again", async () => {
    const { tokens, advance, signed } = setup();
    const k = key();
    const t = (await tokens.get(k)).jwt;
    tokens.rejected(k, t, "InvalidProviderToken: check");
    expect(await tokens.get(k)).toEqual({ jwt: t, rejected: "InvalidProviderToken: check" });
    advance(MIN);
    expect(await tokens.get(k)).toEqual({ jwt: t });
    expect(signed).toHaveLength(1);
  });

  it("refuses a refresh age outside 20 to 60 minutes", () => {
    expect(() => new ProviderTokens({ refreshAfterMs: 10 * MIN })).toThrow();
    expect(() => new ProviderTokens({ refreshAfterMs: 60 * MIN })).toThrow();
  });
});
