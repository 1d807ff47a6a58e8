import { randomBytes, randomUUID } from "node:crypto";
import { Role } from "@herald/proto/identity";
import { createPool } from "@herald/runtime";
import { base64url, decodeJwt, decodeProtectedHeader, importJWK, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { IdentityClient } from "../src/backends.js";
import type { Backends, TestGateway } from "./harness.js";
import { type OwnerStack, startOwnerStack } from "./owner-stack.js";
import { type Operation, v1Operations, validBody } from "./operations.js";
import { createOrgFixtures, operationUrl, readableState } from "./org-fixtures.js";
import { newPassword, type SessionTokens } from "./session-tokens.js";

/**
 * Isolation: every /v1 operation of the OpenAPI document (so a new route is covered the
 * day it is added), addressed at organization A's real resources, × every credential
 * that must not reach them: missing, malformed, unknown, revoked, expired and forged ones
 * get exactly 401; valid credentials of someone else (an app key of another app of the
 * same organization, an org key, a session and a client key of organization B) get 403
 * for everything of A's apps, and 403 or 404 for A's people (members, invitations, OAuth
 * clients are looked up within the caller's own organization). Routes that name nothing of
 * A's act on the caller's own organization and must not show anything of A's. Nothing of
 * A's changes. (Roles within one organization: roles.int.test.ts; client keys of the same
 * app: client-keys.int.test.ts.)
 */

let backends: Backends;
let gw: TestGateway;
let stack: OwnerStack;
let operations: Operation[];
let ownerA: string;
let fixtures: Record<string, string>;
/** Credentials that must get 401, by a name for the failure message. */
const unauthenticated: Record<string, string | undefined> = {};
/** Valid credentials of someone else, by name. */
const foreign: Record<string, string> = {};

const randomKey = (prefix: string) =>
  `${prefix}${randomBytes(40)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 40)}`;

beforeAll(async () => {
  stack = await startOwnerStack({ rateLimitPerMinute: 1_000_000 });
  ({ backends, gw } = stack);
  const { identity, tokens, owner } = stack;
  ownerA = owner.token;
  const keyA = backends.bootstrapKey;
  fixtures = await createOrgFixtures(gw, keyA, owner, tokens);
  const created = async (path: string, token: string, body: unknown) => {
    const res = await gw.call("POST", path, token, body);
    expect(res.status, `${path}: ${res.text}`).toBe(201);
    return res.body;
  };

  // Organization A's other app, with a key scoped to it.
  const otherApp = await created("/v1/apps", keyA, {
    name: "Other",
    platform: "ios",
    bundle_id: `com.example.other${randomUUID().slice(0, 8)}`,
  });
  foreign["app key of A's other app"] = (
    await created(`/v1/apps/${otherApp.id}/api-keys`, keyA, { name: "other app", scope: "app" })
  ).secret;

  // Organization B, its owner, an app, an org key and a client key.
  const pool = createPool({ url: inject("infra").databaseUrl, schema: backends.credentialSchema, max: 1 });
  let orgB: string;
  try {
    const { rows } = await pool.query<{ id: string }>("INSERT INTO orgs (name) VALUES ($1) RETURNING id", ["B"]);
    orgB = rows[0]!.id;
  } finally {
    await pool.end();
  }
  const emailB = `owner-b-${randomUUID().slice(0, 8)}@example.com`;
  const { token: invitation } = await identity.createInvitation({
    orgId: orgB,
    email: emailB,
    role: Role.OWNER,
  });
  const { user } = await identity.acceptInvitation({ token: invitation, password: newPassword(), name: "B" });
  const ownerB = await tokens.mint({ userId: user!.id, orgId: orgB, role: "owner" });
  foreign["session of B's owner"] = ownerB;
  const appB = await created("/v1/apps", ownerB, { name: "B", platform: "web", bundle_id: "com.example.b" });
  foreign["org key of B"] = (await created(`/v1/apps/${appB.id}/api-keys`, ownerB, { name: "b", scope: "org" })).secret;
  foreign["client key of B's app"] = (
    await created(`/v1/apps/${appB.id}/api-keys`, ownerB, { name: "b site", kind: "client" })
  ).secret;

  // Credentials that authenticate nobody.
  const revoked = await created(`/v1/apps/${fixtures.app_id}/api-keys`, keyA, { name: "revoked", scope: "org" });
  const revoke = await gw.call("DELETE", `/v1/apps/${fixtures.app_id}/api-keys/${revoked.id}`, keyA);
  expect(revoke.status, revoke.text).toBe(204);
  Object.assign(unauthenticated, {
    "no credentials": undefined,
    "a revoked key": revoked.secret,
    "an unknown server key": randomKey("hk_live_"),
    "an unknown client key": randomKey("hk_pub_"),
    "a key of the wrong shape": "hk_live_short",
    "a word": "letmein",
    "an empty token": "",
    ...(await forgedTokens(identity, tokens, owner.userId, owner.orgId)),
  });

  operations = await v1Operations(gw.app);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

/** Session tokens of A's owner that must not be accepted: expired, or not the issuer's. */
async function forgedTokens(
  identity: IdentityClient,
  tokens: SessionTokens,
  userId: string,
  orgId: string,
): Promise<Record<string, string>> {
  const real = await tokens.mint({ userId, orgId, role: "owner" });
  const header = decodeProtectedHeader(real);
  const claims = decodeJwt(real);
  const { keys } = await identity.getSigningKeys({});
  const active = keys.find((k) => k.active)!;
  const issuerKey = await importJWK(JSON.parse(active.privateJwk) as JWK, "ES256");
  const { d: _private, ...publicJwk } = JSON.parse(active.privateJwk) as JWK;
  const stranger = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
  const enc = (v: object) => base64url.encode(JSON.stringify(v));
  const [h, , sig] = real.split(".");
  const sign = (c: object, key: Parameters<SignJWT["sign"]>[0] = issuerKey, alg = "ES256") =>
    new SignJWT(c as Record<string, unknown>).setProtectedHeader({ ...header, alg } as { alg: string }).sign(key);
  return {
    "an expired session token": await tokens.mint({ userId, orgId, role: "owner", ttlSeconds: -60 }),
    "a session token for another audience": await sign({ ...claims, aud: "https://elsewhere.example/v1" }),
    "a session token of another issuer": await sign({ ...claims, iss: "https://elsewhere.example" }),
    "a session token signed by a stranger": await sign(claims, stranger.privateKey),
    "a session token with changed claims": `${h}.${enc({ ...claims, org_id: randomUUID() })}.${sig}`,
    "a session token with alg none": `${enc({ ...header, alg: "none" })}.${enc(claims)}.`,
    "a session token signed HS256 with the public key": await sign(
      claims,
      new TextEncoder().encode(JSON.stringify(publicJwk)),
      "HS256",
    ),
  };
}

const label = (op: Operation) => `${op.method} ${op.path}`;

const send = (op: Operation, token: string | undefined, headers: Record<string, string> = {}) =>
  gw.call(
    op.method as "GET",
    operationUrl(op, fixtures),
    token,
    op.method === "GET" || op.method === "DELETE" ? undefined : validBody(op, fixtures),
    op.operationId === "importDevices" ? { "content-type": "application/x-ndjson", ...headers } : headers,
  );

/** Whether the request names something of organization A: a path id, the app_id query, or an id in the body. */
function namesA(op: Operation): boolean {
  const body = op.method === "GET" || op.method === "DELETE" ? "" : JSON.stringify(validBody(op, fixtures) ?? "");
  return (
    /\{\w+\}/.test(op.path) || op.query.includes("app_id") || Object.values(fixtures).some((id) => body.includes(id))
  );
}

const PEOPLE = /^\/v1\/(members|invitations|oauth-clients)\/\{/;

describe("isolation on every /v1 route", () => {
  it("answers exactly 401 to every credential that authenticates nobody, changing nothing", async () => {
    const before = await readableState(gw, ownerA, operations, fixtures);
    let cases = 0;
    for (const op of operations.filter((o) => !o.isPublic)) {
      for (const [name, token] of Object.entries(unauthenticated)) {
        const res = await send(op, token);
        expect(res.status, `${name}: ${label(op)}: ${res.text}`).toBe(401);
        expect(res.body.error, `${name}: ${label(op)}`).toBe("Unauthorized");
        cases++;
      }
      // Not a bearer token at all.
      const basic = await send(op, undefined, { authorization: `Basic ${base64url.encode("user:pass")}` });
      expect(basic.status, `Basic: ${label(op)}`).toBe(401);
      cases++;
    }
    expect(cases).toBeGreaterThan(800);
    expect(await readableState(gw, ownerA, operations, fixtures)).toEqual(before);
  }, 180_000);

  it("keeps everyone else out of A's apps and people (403, or 404 for people), changing nothing", async () => {
    const before = await readableState(gw, ownerA, operations, fixtures);
    const ids = Object.values(fixtures);
    let cases = 0;
    const wrong: string[] = [];
    for (const op of operations.filter((o) => !o.isPublic)) {
      for (const [name, token] of Object.entries(foreign)) {
        const res = await send(op, token);
        const what = `${name}: ${label(op)}: ${res.status} ${res.text}`;
        if (namesA(op)) {
          const allowed = PEOPLE.test(op.path) ? [403, 404] : [403];
          const name = res.status === 403 ? "Forbidden" : "NotFound";
          if (!allowed.includes(res.status) || res.body?.error !== name) wrong.push(what);
        } else if (res.status >= 500 || ids.some((id) => res.text.includes(id))) {
          // The caller's own organization: whatever it may do there, never A's things.
          wrong.push(what);
        }
        cases++;
      }
    }
    expect(wrong).toEqual([]);
    expect(cases).toBeGreaterThan(200);
    expect(await readableState(gw, ownerA, operations, fixtures)).toEqual(before);
  }, 180_000);

  it("decides 401 and 403 before the body: a wrong media type or a bad body changes nothing", async () => {
    const before = await readableState(gw, ownerA, operations, fixtures);
    const wrong: string[] = [];
    const covered = new Set<string>();
    const withBody = operations.filter((o) => !o.isPublic && o.method !== "GET" && o.method !== "DELETE");
    for (const op of withBody) {
      const url = operationUrl(op, fixtures);
      const method = op.method as "POST";
      const notJson = { "content-type": "text/plain" };
      // No credentials: 401 whatever the body.
      const anonymous = await gw.call(method, url, undefined, "not json", notJson);
      if (anonymous.status !== 401) wrong.push(`no credentials: ${label(op)}: ${anonymous.status} ${anonymous.text}`);
      // People are looked up within the caller's own organization: nothing of A's to authorize.
      if (!namesA(op) || PEOPLE.test(op.path)) continue;
      // A's app or resource named in the path or query: 403 before the body is even read.
      const namedBeforeBody = /\{\w+\}/.test(op.path) || op.query.includes("app_id");
      for (const [name, token] of Object.entries(foreign)) {
        const res = namedBeforeBody
          ? await gw.call(method, url, token, "not json", notJson)
          : // Named in the body: checked once the body is parsed, before its schema.
            await gw.call(method, url, token, { ...(validBody(op, fixtures) as object), not_a_field: true });
        if (res.status !== 403 || res.body?.error !== "Forbidden") {
          wrong.push(`${name}: ${label(op)}: ${res.status} ${res.text}`);
        }
        covered.add(label(op));
      }
    }
    expect(wrong).toEqual([]);
    expect([...covered]).toEqual(
      expect.arrayContaining(["POST /v1/devices/import", "PUT /v1/apps/{app_id}", "POST /v1/push/send-to-devices"]),
    );
    expect(await readableState(gw, ownerA, operations, fixtures)).toEqual(before);
  }, 180_000);
});
