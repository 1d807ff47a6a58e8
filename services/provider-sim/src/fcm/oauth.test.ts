import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { AccessTokenStore, CLOUD_PLATFORM_SCOPE, FCM_SCOPE, verifyAssertion } from "./oauth.js";
import { ServiceAccountStore } from "./service-accounts.js";

const TOKEN_URI = "https://127.0.0.1:4443/token";
const EMAIL = "sender@herald-test.iam.gserviceaccount.com";
const NOW = 1_800_000_000;

function rsa(): { pem: string; key: KeyObject } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { pem: privateKey.export({ type: "pkcs8", format: "pem" }) as string, key: privateKey };
}

const account = rsa();

function setup() {
  const accounts = new ServiceAccountStore(TOKEN_URI);
  accounts.register({
    project_id: "herald-test",
    client_email: EMAIL,
    private_key: account.pem,
    private_key_id: "kid-1",
  });
  const good = { iss: EMAIL, scope: FCM_SCOPE, aud: TOKEN_URI, iat: NOW, exp: NOW + 3600 };
  const sign = (claims: Record<string, unknown>, opts: { key?: KeyObject; kid?: string; alg?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: opts.alg ?? "RS256", typ: "JWT", kid: opts.kid ?? "kid-1" })
      .sign(opts.key ?? account.key);
  const outcome = async (assertion: string | Promise<string>, now = NOW) => {
    const r = await verifyAssertion(await assertion, accounts, TOKEN_URI, now);
    return r.ok ? "ok" : `${r.refusal.status} ${r.refusal.error}: ${r.refusal.description}`;
  };
  return { accounts, good, sign, outcome };
}

describe("verifyAssertion", () => {
  it("accepts a service account's RS256 assertion for the FCM or cloud-platform scope", async () => {
    const { accounts, good, sign } = setup();
    const r = await verifyAssertion(await sign(good), accounts, TOKEN_URI, NOW);
    expect(r.ok && { email: r.account.clientEmail, scopes: r.scopes }).toEqual({ email: EMAIL, scopes: [FCM_SCOPE] });
    const broad = await verifyAssertion(
      await sign({ ...good, scope: `openid ${CLOUD_PLATFORM_SCOPE}` }),
      accounts,
      TOKEN_URI,
      NOW,
    );
    expect(broad.ok).toBe(true);
    expect((await verifyAssertion(await sign({ ...good, sub: EMAIL }), accounts, TOKEN_URI, NOW)).ok).toBe(true);
  });

  it("refuses a wrong key, a wrong kid and another algorithm as a bad signature", async () => {
    const { good, sign, outcome } = setup();
    expect(await outcome(sign(good, { key: rsa().key }))).toBe("400 invalid_grant: Invalid JWT Signature.");
    expect(await outcome(sign(good, { kid: "kid-2" }))).toBe("400 invalid_grant: Invalid JWT Signature.");
    const es = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    expect(await outcome(sign(good, { key: es, alg: "ES256" }))).toBe("400 invalid_grant: Invalid JWT Signature.");
  });

  it("refuses an unknown issuer and a revoked account", async () => {
    const { accounts, good, sign, outcome } = setup();
    expect(await outcome(sign({ ...good, iss: "other@herald-test.iam.gserviceaccount.com" }))).toBe(
      "400 invalid_grant: Invalid grant: account not found",
    );
    const assertion = await sign(good);
    accounts.revoke(EMAIL);
    expect(await outcome(assertion)).toBe("400 invalid_grant: Invalid grant: account not found");
  });

  it("needs aud to be this token endpoint", async () => {
    const { good, sign, outcome } = setup();
    for (const aud of ["https://oauth2.googleapis.com/token", "https://127.0.0.1:4443", [TOKEN_URI]]) {
      expect(await outcome(sign({ ...good, aud }))).toMatch(/^400 invalid_grant: Invalid JWT: Failed audience check/);
    }
  });

  it("needs iat and exp at most an hour apart, exp in the future and iat not ahead of the clock", async () => {
    const { good, sign, outcome } = setup();
    const times = /^400 invalid_grant: Invalid JWT: Token must be a short-lived token/;
    expect(await outcome(sign({ ...good, iat: NOW - 3599, exp: NOW + 1 }))).toBe("ok");
    expect(await outcome(sign({ ...good, iat: NOW - 3600, exp: NOW + 1 }))).toMatch(times);
    expect(await outcome(sign({ ...good, iat: NOW + 60, exp: NOW + 3660 }))).toBe("ok");
    expect(await outcome(sign({ ...good, iat: NOW - 3601, exp: NOW }))).toMatch(times);
    expect(await outcome(sign({ ...good, exp: NOW + 3601 }))).toMatch(times);
    expect(await outcome(sign({ ...good, iat: NOW + 61, exp: NOW + 3661 }))).toMatch(times);
    expect(await outcome(sign({ ...good, exp: NOW }))).toMatch(times);
    expect(await outcome(sign({ iss: EMAIL, scope: FCM_SCOPE, aud: TOKEN_URI, iat: NOW }))).toMatch(times);
    expect(await outcome(sign({ iss: EMAIL, scope: FCM_SCOPE, aud: TOKEN_URI, exp: NOW + 60 }))).toMatch(times);
    expect(await outcome(sign(good), NOW + 3600)).toMatch(times);
  });

  it("needs a scope that can send with FCM", async () => {
    const { good, sign, outcome } = setup();
    expect(await outcome(sign({ ...good, scope: "https://www.googleapis.com/auth/devstorage.read_only" }))).toBe(
      "400 invalid_scope: Invalid OAuth scope or ID token audience provided.",
    );
    expect(await outcome(sign({ ...good, scope: "" }))).toBe("400 invalid_scope: Empty or missing scope not allowed.");
    const { scope: _scope, ...noScope } = good;
    expect(await outcome(sign(noScope))).toBe("400 invalid_scope: Empty or missing scope not allowed.");
  });

  it("refuses delegation to another subject", async () => {
    const { good, sign, outcome } = setup();
    expect(await outcome(sign({ ...good, sub: "user@example.com" }))).toMatch(/^401 unauthorized_client:/);
  });

  it("refuses text that is not a JWT", async () => {
    const { outcome } = setup();
    expect(await outcome("garbage")).toMatch(/^400 invalid_grant:/);
    expect(await outcome("a.b.c")).toMatch(/^400 invalid_grant:/);
  });
});

describe("AccessTokenStore", () => {
  it("issues tokens that expire, counts them per account, and drops them with the account", () => {
    const accounts = new ServiceAccountStore(TOKEN_URI);
    accounts.register({ project_id: "herald-test", client_email: EMAIL, private_key: account.pem });
    const tokens = new AccessTokenStore(accounts);
    const acc = accounts.get(EMAIL)!;
    const token = tokens.issue(acc, 3599, 0);
    expect(token).toMatch(/^ya29\.[A-Za-z0-9_-]+$/);
    expect(tokens.check(token, 3_598_999)).toEqual({ ok: true, account: acc });
    expect(tokens.check(token, 3_599_000)).toEqual({ ok: false, reason: "expired" });
    expect(tokens.check("ya29.unknown", 0)).toEqual({ ok: false, reason: "unknown" });
    expect(accounts.list()[0]!.tokens_issued).toBe(1);
    accounts.revoke(EMAIL);
    expect(tokens.check(token, 0)).toEqual({ ok: false, reason: "revoked" });
  });
});

describe("ServiceAccountStore", () => {
  it("generates a key pair and a complete service-account JSON when given no key", () => {
    const accounts = new ServiceAccountStore(TOKEN_URI);
    const { account: view, service_account: json } = accounts.register({ project_id: "herald-test" });
    expect(json).toMatchObject({
      type: "service_account",
      project_id: "herald-test",
      token_uri: TOKEN_URI,
      client_email: view.client_email,
    });
    expect(json!.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(view).not.toHaveProperty("private_key");
  });

  it("refuses bad project ids, emails and keys", () => {
    const accounts = new ServiceAccountStore(TOKEN_URI);
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" });
    for (const bad of [
      { project_id: "Herald" },
      { project_id: "abc" },
      { project_id: "herald-test", client_email: "not-an-email" },
      { project_id: "herald-test", private_key: ec },
      { project_id: "herald-test", private_key: "nope" },
      { project_id: "herald-test", private_key: account.pem, public_key: account.pem },
    ]) {
      expect(() => accounts.register(bad), JSON.stringify(bad).slice(0, 60)).toThrow();
    }
  });
});
