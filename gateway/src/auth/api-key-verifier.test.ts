import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { Principal } from "../principal.js";
import { ApiKeyVerifier, rejectedKey } from "./api-key-verifier.js";

const principal: Principal = { orgId: "o", scope: "org", identity: "key:k1", rateLimitPerMinute: 1000 };
const GOOD = "hk_live_good000000000000000000000000000000";

function fakeBackend() {
  const calls: string[] = [];
  let answer: Principal | null = principal;
  return {
    calls,
    set: (p: Principal | null) => (answer = p),
    verify: async (secret: string) => {
      calls.push(secret);
      await new Promise((r) => setImmediate(r));
      return secret === GOOD ? answer : null;
    },
  };
}

describe("ApiKeyVerifier", () => {
  it("asks the backend once per TTL and shares concurrent lookups", async () => {
    let now = 0;
    const backend = fakeBackend();
    const verifier = new ApiKeyVerifier(backend.verify, 10_000, { now: () => now });
    const results = await Promise.all([1, 2, 3].map(() => verifier.principalFor(GOOD)));
    expect(results).toEqual([principal, principal, principal]);
    expect(backend.calls).toHaveLength(1);
    now = 9_999;
    await verifier.principalFor(GOOD);
    expect(backend.calls).toHaveLength(1);
    now = 10_000;
    await verifier.principalFor(GOOD);
    expect(backend.calls).toHaveLength(2);
  });

  it("remembers unknown keys only briefly", async () => {
    let now = 0;
    const backend = fakeBackend();
    const verifier = new ApiKeyVerifier(backend.verify, 10_000, { now: () => now });
    expect(await verifier.principalFor("hk_live_bad")).toBeNull();
    expect(await verifier.principalFor("hk_live_bad")).toBeNull();
    expect(backend.calls).toHaveLength(1);
    now = 2_000;
    await verifier.principalFor("hk_live_bad");
    expect(backend.calls).toHaveLength(2);
  });

  it("forgets a revoked key at once", async () => {
    const backend = fakeBackend();
    const verifier = new ApiKeyVerifier(backend.verify, 10_000, { now: () => 0 });
    await verifier.principalFor(GOOD);
    backend.set(null);
    verifier.forgetKey("key:k1");
    expect(await verifier.principalFor(GOOD)).toBeNull();
  });

  it("does not cache backend failures", async () => {
    let fail = true;
    const verifier = new ApiKeyVerifier(async () => {
      if (fail) throw new ConnectError("down", Code.Unavailable);
      return principal;
    }, 10_000);
    await expect(verifier.principalFor(GOOD)).rejects.toThrow(/down/);
    fail = false;
    expect(await verifier.principalFor(GOOD)).toEqual(principal);
  });

  it("never keeps the secret itself", async () => {
    const backend = fakeBackend();
    const verifier = new ApiKeyVerifier(backend.verify, 10_000);
    await verifier.principalFor(GOOD);
    expect(
      JSON.stringify([...(verifier as unknown as { cache: { entries: Map<string, unknown> } }).cache.entries.keys()]),
    ).not.toContain(GOOD);
  });
});

describe("rejectedKey", () => {
  it("treats 'no such key' answers as rejection and outages as errors", () => {
    expect(rejectedKey(new ConnectError("x", Code.Unauthenticated))).toBe(true);
    expect(rejectedKey(new ConnectError("x", Code.InvalidArgument))).toBe(true);
    expect(rejectedKey(new ConnectError("x", Code.Unavailable))).toBe(false);
    expect(rejectedKey(new Error("x"))).toBe(false);
  });
});
