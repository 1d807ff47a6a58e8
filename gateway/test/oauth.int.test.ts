import { randomBytes, randomUUID } from "node:crypto";
import { IdentityService, Role } from "@herald/proto/identity";
import { createPool, createRpcClient } from "@herald/runtime";
import { base64url, decodeJwt, decodeProtectedHeader, SignJWT, type JWK } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { expectError, useGatewayStack } from "./harness.js";
import { Browser, formOf, injectFetch, type Page, pkce, type Pkce } from "./oauth-browser.js";

// The gateway's OAuth 2.1 server driven by a standards-based client (oauth4webapi) and a
// hand-driven browser, against the real credential service (IdentityService).
const ISSUER = "https://herald.test";
const CONSOLE = "herald-console";
const REDIRECT = `${ISSUER}/console/callback`;

const gw = useGatewayStack({ publicUrl: ISSUER });
let identity: ReturnType<typeof createRpcClient<typeof IdentityService>>;
let as: oauth.AuthorizationServer;
let opts: { [oauth.customFetch]: typeof fetch };
let orgA: string;
let orgB: string;
const client: oauth.Client = { client_id: CONSOLE };

const password = () => randomBytes(15).toString("base64url");

interface User {
  email: string;
  password: string;
}

async function createUser(orgId: string, role: Role): Promise<User> {
  const user = { email: `${randomUUID().slice(0, 8)}@example.com`, password: password() };
  const { token } = await identity.client.createInvitation({ orgId, email: user.email, role });
  await identity.client.acceptInvitation({ token, password: user.password, name: "Test User" });
  return user;
}

function authorizationUrl(p: Pkce, extra: Record<string, string> = {}): string {
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: CONSOLE,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid offline_access",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    state: p.state,
    ...extra,
  }).toString();
  return url.pathname + url.search;
}

/** Opens the authorization URL and submits the sign-in form; the last redirect. */
async function signIn(browser: Browser, user: User, p: Pkce, extra: Record<string, string> = {}) {
  const signInPage = await browser.follow(await browser.request("GET", authorizationUrl(p, extra)), ISSUER);
  expect(signInPage.status, signInPage.body).toBe(200);
  const form = formOf(signInPage.body);
  const posted = await browser.request("POST", form.action, {
    csrf: form.csrf,
    email: user.email,
    password: user.password,
  });
  return browser.follow(posted, ISSUER);
}

async function tokensFor(user: User, extra: Record<string, string> = {}) {
  const p = await pkce();
  const browser = new Browser(gw.app);
  const last = await signIn(browser, user, p, extra);
  expect(last.location, last.body).toMatch(/^https:\/\/herald\.test\/console\/callback\?/);
  const params = oauth.validateAuthResponse(as, client, new URL(last.location!), p.state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, p.verifier, opts);
  return { tokens: await oauth.processAuthorizationCodeResponse(as, client, res), params, p, browser };
}

async function tokenCall(body: Record<string, string>) {
  const res = await gw.app.inject({
    method: "POST",
    url: "/oauth/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams({ client_id: CONSOLE, ...body }).toString(),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

let owner: User;

beforeAll(async () => {
  const { backends } = gw;
  identity = createRpcClient(IdentityService, backends.credentialUrl);
  opts = { [oauth.customFetch]: injectFetch(gw.app) };
  as = await oauth.processDiscoveryResponse(
    new URL(ISSUER),
    await oauth.discoveryRequest(new URL(ISSUER), { ...opts, algorithm: "oauth2" }),
  );
  const app = await gw.call("POST", "/v1/apps", gw.key, {
    name: "A",
    platform: "ios",
    bundle_id: `com.example.${randomUUID().slice(0, 8)}`,
  });
  orgA = app.body.org_id;
  const pool = createPool({ url: inject("infra").databaseUrl, schema: backends.credentialSchema, max: 1 });
  try {
    const { rows } = await pool.query<{ id: string }>("INSERT INTO orgs (name) VALUES ($1) RETURNING id", [
      `other-${randomUUID().slice(0, 8)}`,
    ]);
    orgB = rows[0]!.id;
  } finally {
    await pool.end();
  }
  owner = await createUser(orgA, Role.OWNER);
});

afterAll(async () => {
  identity?.close();
});

describe("metadata", () => {
  it("publishes RFC 8414 and OpenID discovery on the gateway's origin", async () => {
    expect(as.issuer).toBe(ISSUER);
    expect(as.authorization_endpoint).toBe(`${ISSUER}/oauth/auth`);
    expect(as.token_endpoint).toBe(`${ISSUER}/oauth/token`);
    expect(as.jwks_uri).toBe(`${ISSUER}/oauth/jwks`);
    expect(as.revocation_endpoint).toBe(`${ISSUER}/oauth/token/revocation`);
    expect(as.response_types_supported).toEqual(["code"]);
    expect(as.grant_types_supported).toEqual(["authorization_code", "refresh_token"]);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    const oidc = await gw.call("GET", "/.well-known/openid-configuration");
    expect(oidc.status).toBe(200);
    expect(oidc.body.issuer).toBe(ISSUER);
  });

  it("serves public keys only, each with a kid", async () => {
    const res = await gw.call("GET", "/oauth/jwks");
    expect(res.status).toBe(200);
    const keys = res.body.keys as JWK[];
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key.kid).toEqual(expect.any(String));
      for (const priv of ["d", "p", "q", "dp", "dq", "qi", "k"]) expect(key).not.toHaveProperty(priv);
    }
  });
});

describe("authorization code with PKCE", () => {
  it("signs in like a browser and calls /v1 with the access token", async () => {
    const { tokens, params, p } = await tokensFor(owner);
    expect(params.get("state")).toBe(p.state);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const header = decodeProtectedHeader(tokens.access_token);
    expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt", kid: expect.any(String) });
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ iss: ISSUER, aud: `${ISSUER}/v1`, org_id: orgA, role: "owner", client_id: CONSOLE });
    expect(claims.exp! - claims.iat!).toBe(900);
    const apps = await gw.call("GET", "/v1/apps", tokens.access_token);
    expect(apps.status, apps.text).toBe(200);
  });

  it("renders a sign-in page with labelled fields, a CSRF token and a strict CSP", async () => {
    const browser = new Browser(gw.app);
    const page = await browser.follow(await browser.request("GET", authorizationUrl(await pkce())), ISSUER);
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/<label for="email">Email<\/label>/);
    expect(page.body).toMatch(/<label for="password">Password<\/label>/);
    expect(page.body).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(page.body).not.toMatch(/<script|https?:\/\/(?!herald\.test)/);
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/form-action 'self'/);
    expect(csp).not.toMatch(/unsafe-inline/);
    for (const [name, value] of browser.cookies) expect(name, value).toMatch(/^herald_/);
  });

  it("sets Secure, HttpOnly, SameSite=Lax cookies on an https issuer", async () => {
    const res = await gw.app.inject({ method: "GET", url: authorizationUrl(await pkce()) });
    const cookies = [res.headers["set-cookie"]].flat().filter(Boolean) as string[];
    expect(cookies.length).toBeGreaterThan(0);
    for (const c of cookies) {
      expect(c.toLowerCase()).toMatch(/; secure/);
      expect(c.toLowerCase()).toContain("; httponly");
      expect(c.toLowerCase()).toContain("; samesite=lax");
    }
  });

  it("refuses a sign-in POST without the interaction's CSRF token", async () => {
    const browser = new Browser(gw.app);
    const page = await browser.follow(await browser.request("GET", authorizationUrl(await pkce())), ISSUER);
    const { action } = formOf(page.body);
    const res = await browser.request("POST", action, { csrf: "forged", email: owner.email, password: owner.password });
    expect(res.status).toBe(403);
    expect(res.location).toBeUndefined();
  });

  it("requires PKCE S256: missing and plain are refused, a wrong verifier too", async () => {
    const p = await pkce();
    const missing = await gw.app.inject({
      method: "GET",
      url: authorizationUrl(p).replace(/&code_challenge=[^&]+&code_challenge_method=S256/, ""),
    });
    expect(missing.statusCode).toBe(303);
    expect(missing.headers.location).toMatch(/error=invalid_request/);
    const plain = await gw.app.inject({
      method: "GET",
      url: authorizationUrl(p, { code_challenge: p.verifier, code_challenge_method: "plain" }),
    });
    expect(plain.headers.location).toMatch(/error=invalid_request/);

    const browser = new Browser(gw.app);
    const last = await signIn(browser, owner, p);
    const params = oauth.validateAuthResponse(as, client, new URL(last.location!), p.state);
    const wrong = await tokenCall({
      grant_type: "authorization_code",
      code: params.get("code")!,
      redirect_uri: REDIRECT,
      code_verifier: (await pkce()).verifier,
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });

  it("refuses a redirect URI that is not registered exactly", async () => {
    for (const redirect of [`${REDIRECT}/`, `${REDIRECT}?x=1`, "https://evil.test/console/callback"]) {
      const res = await gw.app.inject({
        method: "GET",
        url: authorizationUrl(await pkce(), { redirect_uri: redirect }),
      });
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
  });

  it("refuses a reused code and revokes what it issued", async () => {
    const p = await pkce();
    const browser = new Browser(gw.app);
    const last = await signIn(browser, owner, p);
    const params = oauth.validateAuthResponse(as, client, new URL(last.location!), p.state);
    const body = {
      grant_type: "authorization_code",
      code: params.get("code")!,
      redirect_uri: REDIRECT,
      code_verifier: p.verifier,
    };
    const first = await tokenCall(body);
    expect(first.status).toBe(200);
    const again = await tokenCall(body);
    expect(again).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    const refresh = await tokenCall({ grant_type: "refresh_token", refresh_token: first.body.refresh_token as string });
    expect(refresh).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expectError(await gw.call("GET", "/v1/apps", first.body.access_token as string), 401, "Unauthorized");
  });
});

describe("refresh tokens", () => {
  it("rotate, and a reused one revokes the family", async () => {
    const { tokens } = await tokensFor(owner);
    const rotated = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, opts),
    );
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await gw.call("GET", "/v1/apps", rotated.access_token)).status).toBe(200);

    const reused = await tokenCall({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! });
    expect(reused).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    const next = await tokenCall({ grant_type: "refresh_token", refresh_token: rotated.refresh_token! });
    expect(next).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });

  it("are revoked by the revocation endpoint (RFC 7009)", async () => {
    const { tokens } = await tokensFor(owner);
    const res = await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, opts);
    await oauth.processRevocationResponse(res);
    const after = await tokenCall({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! });
    expect(after).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });
});

describe("access tokens at /v1", () => {
  it("refuses expired and forged tokens with 401", async () => {
    const { tokens } = await tokensFor(owner);
    const header = decodeProtectedHeader(tokens.access_token);
    const claims = decodeJwt(tokens.access_token);
    const [h, , sig] = tokens.access_token.split(".");
    const enc = (v: object) => base64url.encode(JSON.stringify(v));
    const jwks = (await gw.call("GET", "/oauth/jwks")).body.keys as JWK[];
    const publicJwk = jwks.find((k) => k.kid === header.kid)!;
    const stranger = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
    const now = Math.floor(Date.now() / 1000);

    const forged = [
      // Someone else's key, same kid.
      await new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(stranger.privateKey),
      // Claims changed under the original signature.
      `${h}.${enc({ ...claims, role: "owner", org_id: orgB })}.${sig}`,
      // alg none.
      `${enc({ alg: "none", typ: "at+jwt", kid: header.kid })}.${enc(claims)}.`,
      // HS256 keyed with the public key.
      await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid: header.kid! })
        .sign(new TextEncoder().encode(JSON.stringify(publicJwk))),
      // Wrong audience, expired: signed by a stranger since only the server holds the key.
      await new SignJWT({ ...claims, aud: "https://elsewhere.test" })
        .setProtectedHeader(header as { alg: string })
        .sign(stranger.privateKey),
      await new SignJWT({ ...claims, iat: now - 7200, exp: now - 3600 })
        .setProtectedHeader(header as { alg: string })
        .sign(stranger.privateKey),
    ];
    for (const token of forged) expectError(await gw.call("GET", "/v1/apps", token), 401, "Unauthorized");
  });

  it("keeps a member of one organization out of another's apps (403)", async () => {
    const ownerB = await createUser(orgB, Role.OWNER);
    const b = await tokensFor(ownerB);
    expect(decodeJwt(b.tokens.access_token).org_id).toBe(orgB);
    const created = await gw.call("POST", "/v1/apps", b.tokens.access_token, {
      name: "B",
      platform: "ios",
      bundle_id: `com.example.${randomUUID().slice(0, 8)}`,
    });
    expect(created.status, created.text).toBe(201);
    const { tokens } = await tokensFor(owner);
    expectError(await gw.call("GET", `/v1/apps/${created.body.id}`, tokens.access_token), 403, "Forbidden");
  });

  it("signs a member of several organizations into the one asked for", async () => {
    const both = await createUser(orgA, Role.DEVELOPER);
    const { token } = await identity.client.createInvitation({ orgId: orgB, email: both.email, role: Role.VIEWER });
    await identity.client.acceptInvitation({ token, password: both.password, name: "" });
    const a = await tokensFor(both);
    expect(decodeJwt(a.tokens.access_token)).toMatchObject({ org_id: orgA, role: "developer" });
    const b = await tokensFor(both, { org_id: orgB });
    expect(decodeJwt(b.tokens.access_token)).toMatchObject({ org_id: orgB, role: "viewer" });
  });

  it("refuses a viewer's send (403)", async () => {
    const viewer = await createUser(orgA, Role.VIEWER);
    const { tokens } = await tokensFor(viewer);
    const app = await gw.call("POST", "/v1/apps", gw.key, {
      name: "V",
      platform: "ios",
      bundle_id: `com.example.${randomUUID().slice(0, 8)}`,
    });
    expect((await gw.call("GET", "/v1/apps", tokens.access_token)).status).toBe(200);
    const send = await gw.call("POST", "/v1/push/send", tokens.access_token, {
      app_id: app.body.id,
      name: "hello",
      contents: { en: { title: "Hi", body: "Hello" } },
    });
    expectError(send, 403, "Forbidden");
  });

  it("stops accepting a member's token once they are removed", async () => {
    const dev = await createUser(orgA, Role.DEVELOPER);
    const { tokens } = await tokensFor(dev);
    expect((await gw.call("GET", "/v1/apps", tokens.access_token)).status).toBe(200);
    const sub = decodeJwt(tokens.access_token).sub!;
    await identity.client.removeMember({ orgId: orgA, userId: sub });
    // The gateway trusts a membership lookup for ~10 s.
    await expect
      .poll(async () => (await gw.call("GET", "/v1/apps", tokens.access_token)).status, {
        timeout: 15_000,
        interval: 500,
      })
      .toBe(401);
  });
});

describe("brute force and errors", () => {
  it("answers an unknown email and a wrong password alike", async () => {
    const answers = [];
    for (const email of [owner.email, `nobody-${randomUUID().slice(0, 8)}@example.com`]) {
      const browser = new Browser(gw.app);
      const page = await browser.follow(await browser.request("GET", authorizationUrl(await pkce())), ISSUER);
      const form = formOf(page.body);
      const res = await browser.request("POST", form.action, {
        csrf: form.csrf,
        email,
        password: "wrong-password-123",
      });
      answers.push({ status: res.status, error: /role="alert">([^<]+)</.exec(res.body)?.[1] });
    }
    expect(answers[0]).toEqual({ status: 401, error: "Incorrect email or password." });
    expect(answers[1]).toEqual(answers[0]);
  });

  it("refuses the 11th wrong password within a minute with 429 and Retry-After", async () => {
    const target = await createUser(orgA, Role.VIEWER);
    const browser = new Browser(gw.app);
    const page = await browser.follow(await browser.request("GET", authorizationUrl(await pkce())), ISSUER);
    const form = formOf(page.body);
    const statuses: number[] = [];
    let last: Page | undefined;
    for (let i = 0; i < 11; i++) {
      last = await browser.request("POST", form.action, {
        csrf: form.csrf,
        email: target.email,
        password: `wrong-${i}-password`,
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    expect(Number(last!.headers["retry-after"])).toBeGreaterThan(0);
    expect(last!.body).toMatch(/Too many sign-in attempts/);
    // Even the right password waits for the window.
    const right = await browser.request("POST", form.action, {
      csrf: form.csrf,
      email: target.email,
      password: target.password,
    });
    expect(right.status).toBe(429);
  });
});

describe("invitation page", () => {
  it("shows the org and role, and accepts with a password behind a CSRF token", async () => {
    const email = `${randomUUID().slice(0, 8)}@example.com`;
    const { token } = await identity.client.createInvitation({ orgId: orgA, email, role: Role.DEVELOPER });
    const browser = new Browser(gw.app);
    const page = await browser.request("GET", `/invitations/accept?token=${encodeURIComponent(token)}`);
    expect(page.status, page.body).toBe(200);
    expect(page.body).toMatch(/<label for="password">Password<\/label>/);
    expect(page.body).toMatch(/<label for="name">Name<\/label>/);
    expect(page.body).toMatch(/<button type="submit">Accept invitation<\/button>/);
    expect(page.body).toContain("developer");
    expect(String(page.headers["content-security-policy"])).toMatch(/default-src 'none'/);
    const form = formOf(page.body);
    const chosen = password();

    const forged = await browser.request("POST", form.action, { csrf: "forged", token, password: chosen });
    expect(forged.status).toBe(403);
    const accepted = await browser.request("POST", form.action, {
      csrf: form.csrf,
      token,
      password: chosen,
      name: "New",
    });
    expect(accepted.status, accepted.body).toBe(200);
    expect(accepted.body).toMatch(/href="\/console"/);
    const again = await browser.request("GET", `/invitations/accept?token=${encodeURIComponent(token)}`);
    expect(again.status).toBe(404);
    // The link's token is in the URL: the request log must not keep it.
    expect(gw.logs.text()).toContain("/invitations/accept?token=%5Bredacted%5D");
    expect(gw.logs.text()).not.toContain(token);
    expect(gw.logs.text()).not.toContain(encodeURIComponent(token));

    const { tokens } = await tokensFor({ email, password: chosen });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ org_id: orgA, role: "developer" });
  });
});
