import { createPublicKey, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { makeServiceAccount } from "../../../test/support/credential-fixtures.js";
import {
  FCM_SCOPE,
  OAuthRejectedError,
  OAuthTokenSource,
  OAuthUnavailableError,
  type TokenEndpointResponse,
} from "./oauth-token.js";
import { parseServiceAccount } from "./service-account.js";

const TOKEN_URI = "https://oauth.example.test/token";
const account = parseServiceAccount(makeServiceAccount({ tokenUri: TOKEN_URI, projectId: "proj" }).json);

/** A token endpoint answering from a script, counting calls; answers are released by hand. */
function endpoint(answer: (n: number) => TokenEndpointResponse) {
  const calls: { uri: string; form: URLSearchParams }[] = [];
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  return {
    calls,
    hold() {
      gate = new Promise((r) => (release = r));
    },
    release: () => release(),
    fn: async (uri: string, form: string) => {
      calls.push({ uri, form: new URLSearchParams(form) });
      const n = calls.length;
      await gate;
      return answer(n);
    },
  };
}

const ok = (n: number, expiresIn = 3600): TokenEndpointResponse => ({
  status: 200,
  body: JSON.stringify({ access_token: `token-${n}`, expires_in: expiresIn, token_type: "Bearer" }),
});

describe("OAuthTokenSource", () => {
  it("posts a JWT-bearer grant whose RS256 assertion Google would accept", async () => {
    const ep = endpoint((n) => ok(n));
    const now = 1_700_000_000_000;
    const source = new OAuthTokenSource(ep.fn, { now: () => now });
    expect(await source.accessToken(account)).toBe("token-1");
    const { uri, form } = ep.calls[0]!;
    expect(uri).toBe(TOKEN_URI);
    expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    const [h, c, s] = form.get("assertion")!.split(".");
    expect(JSON.parse(Buffer.from(h!, "base64url").toString())).toEqual({
      alg: "RS256",
      typ: "JWT",
      kid: account.privateKeyId,
    });
    expect(JSON.parse(Buffer.from(c!, "base64url").toString())).toEqual({
      iss: account.clientEmail,
      scope: FCM_SCOPE,
      aud: TOKEN_URI,
      iat: now / 1000,
      exp: now / 1000 + 3600,
    });
    expect(
      verify("sha256", Buffer.from(`${h}.${c}`), createPublicKey(account.privateKey), Buffer.from(s!, "base64url")),
    ).toBe(true);
  });

  it("caches the token and refreshes it five minutes before it expires", async () => {
    const ep = endpoint((n) => ok(n));
    let now = 1_000_000;
    const source = new OAuthTokenSource(ep.fn, { now: () => now });
    expect(await source.accessToken(account)).toBe("token-1");
    now += 54 * 60_000;
    expect(await source.accessToken(account)).toBe("token-1");
    now += 60_000 - 1;
    expect(await source.accessToken(account)).toBe("token-1");
    now += 1; // exactly 55 min: 5 min before expiry
    expect(await source.accessToken(account)).toBe("token-2");
    expect(ep.calls).toHaveLength(2);
  });

  it("renews a short-lived token halfway through", async () => {
    const ep = endpoint((n) => ok(n, 120));
    let now = 0;
    const source = new OAuthTokenSource(ep.fn, { now: () => now });
    await source.accessToken(account);
    now = 59_999;
    expect(await source.accessToken(account)).toBe("token-1");
    now = 60_000;
    expect(await source.accessToken(account)).toBe("token-2");
  });

  it("makes 100 concurrent callers share one fetch", async () => {
    const ep = endpoint((n) => ok(n));
    ep.hold();
    const source = new OAuthTokenSource(ep.fn, { now: () => 0 });
    const all = Promise.all(Array.from({ length: 100 }, () => source.accessToken(account)));
    await new Promise((r) => setTimeout(r, 10));
    ep.release();
    expect(new Set(await all)).toEqual(new Set(["token-1"]));
    expect(ep.calls).toHaveLength(1);
  });

  it("keeps accounts apart, by email and by key", async () => {
    const ep = endpoint((n) => ok(n));
    const source = new OAuthTokenSource(ep.fn, { now: () => 0 });
    const other = parseServiceAccount(makeServiceAccount({ tokenUri: TOKEN_URI }).json);
    const rotated = { ...account, keyId: "rotated" };
    expect(
      await Promise.all([source.accessToken(account), source.accessToken(other), source.accessToken(rotated)]),
    ).toEqual(["token-1", "token-2", "token-3"]);
  });

  it("remembers a rejection briefly, so a revoked account is asked once per batch", async () => {
    const ep = endpoint(() => ({
      status: 400,
      body: JSON.stringify({ error: "invalid_grant", error_description: "Invalid JWT Signature." }),
    }));
    let now = 0;
    const source = new OAuthTokenSource(ep.fn, { now: () => now, rejectionTtlMs: 30_000 });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => source.accessToken(account)));
    await expect(source.accessToken(account)).rejects.toThrow("invalid_grant: Invalid JWT Signature.");
    expect(results.every((r) => r.status === "rejected" && r.reason instanceof OAuthRejectedError)).toBe(true);
    expect(ep.calls).toHaveLength(1);
    now = 30_000;
    await expect(source.accessToken(account)).rejects.toBeInstanceOf(OAuthRejectedError);
    expect(ep.calls).toHaveLength(2);
  });

  it("treats 5xx, 429 and network errors as transient and never caches them", async () => {
    let answer: () => Promise<TokenEndpointResponse> = async () => ({ status: 503, body: "" });
    const source = new OAuthTokenSource(() => answer(), { now: () => 0 });
    await expect(source.accessToken(account)).rejects.toBeInstanceOf(OAuthUnavailableError);
    answer = async () => ({ status: 429, body: "" });
    await expect(source.accessToken(account)).rejects.toBeInstanceOf(OAuthUnavailableError);
    answer = async () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    await expect(source.accessToken(account)).rejects.toThrow("token endpoint unreachable (ECONNREFUSED)");
    answer = async () => ok(9);
    expect(await source.accessToken(account)).toBe("token-9");
  });

  it("keeps using a still-valid token when its refresh fails transiently", async () => {
    let status = 200;
    let now = 0;
    const source = new OAuthTokenSource(async () => (status === 200 ? ok(1) : { status, body: "" }), {
      now: () => now,
    });
    await source.accessToken(account);
    status = 500;
    now = 56 * 60_000;
    expect(await source.accessToken(account)).toBe("token-1");
    now = 60 * 60_000;
    await expect(source.accessToken(account)).rejects.toBeInstanceOf(OAuthUnavailableError);
  });

  it("drops a token FCM refused, but not a newer one", async () => {
    const ep = endpoint((n) => ok(n));
    const source = new OAuthTokenSource(ep.fn, { now: () => 0 });
    const first = await source.accessToken(account);
    source.invalidate(account, first);
    expect(await source.accessToken(account)).toBe("token-2");
    source.invalidate(account, first);
    expect(await source.accessToken(account)).toBe("token-2");
  });
});
