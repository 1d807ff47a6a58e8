import { Code, ConnectError } from "@connectrpc/connect";
import { BoundedCache, isUuid } from "@herald/runtime";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from "jose";
import type { IdentityClient } from "../backends.js";
import { HttpError } from "../http-errors.js";
import { roleName } from "../oauth/member-role-names.js";
import type { SigningKeys } from "../oauth/signing-keys.js";
import type { Principal, Role } from "../principal.js";
import type { VerifyJwt } from "./jwt-verifier.js";

export interface SessionVerifierOptions {
  /** The gateway's public URL: the issuer of its own access tokens. */
  issuer: string;
  keys: SigningKeys;
  identity: IdentityClient;
  defaultRateLimit: number;
  /** Tokens of another issuer (HERALD_JWT_ISSUER), when one is configured. */
  external?: VerifyJwt;
  /** How long a membership or grant lookup is trusted. */
  cacheMs?: number;
  now?: () => number;
}

/** The longest access-token lifetime the gateway issues or accepts. */
const MAX_LIFETIME_SECONDS = 3600;

const unavailable = () => new HttpError("ServiceUnavailable", "session verification is unavailable; retry later");
const notFound = (err: unknown) => err instanceof ConnectError && err.code === Code.NotFound;

/**
 * Verifies the access tokens of the gateway's own OAuth server, locally: ES256 only
 * (so `alg: none` and HS256 keyed with a public key are refused), with a `kid` of the
 * signing-key set (an unknown kid re-reads the set once per cooldown), this issuer,
 * audience `${issuer}/v1`, typ at+jwt, an exp at most an hour after iat. Then, through a
 * short cache, what a signature cannot say: the grant is still there (not signed out,
 * not revoked for a reused code or refresh token) and the user is still a member of the
 * org, with the role they have now, not the one in the token.
 * Tokens of another issuer go to the external verifier when one is configured.
 */
export function createSessionVerifier(o: SessionVerifierOptions): VerifyJwt {
  const audience = `${o.issuer}/v1`;
  const cacheMs = o.cacheMs ?? 10_000;
  const memberships = new BoundedCache<Role | "none">({ maxEntries: 10_000, ttlMs: cacheMs, now: o.now });
  const grants = new BoundedCache<boolean>({ maxEntries: 10_000, ttlMs: cacheMs, now: o.now });
  let jwks: { version: string; keySet: ReturnType<typeof createLocalJWKSet> } | undefined;

  const keySetFor = async (kid: string) => {
    const set = await o.keys.withKid(kid).catch(() => {
      throw unavailable();
    });
    if (jwks?.version !== set.version) {
      jwks = { version: set.version, keySet: createLocalJWKSet({ keys: set.keys.map((k) => k.publicJwk) }) };
    }
    return jwks.keySet;
  };

  const roleOf = (orgId: string, userId: string) =>
    memberships.get(`${orgId}:${userId}`, async () => {
      try {
        const { membership } = await o.identity.getMembership({ orgId, userId });
        return (membership && roleName(membership.role)) || "none";
      } catch (err) {
        if (notFound(err)) return "none";
        throw unavailable();
      }
    });

  const grantAlive = (grantId: string) =>
    grants.get(grantId, async () => {
      try {
        const found = await o.identity.oAuthFind({ kind: "Grant", key: { case: "id", value: grantId } });
        return found.payload !== undefined;
      } catch {
        throw unavailable();
      }
    });

  return async (token) => {
    let kid: unknown;
    let iss: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
      iss = decodeJwt(token).iss;
    } catch {
      return null;
    }
    if (iss !== o.issuer) return o.external ? o.external(token) : null;
    if (typeof kid !== "string" || !kid) return null;

    let claims: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, await keySetFor(kid), {
        issuer: o.issuer,
        audience,
        algorithms: ["ES256"],
        typ: "at+jwt",
        requiredClaims: ["exp", "iat", "sub"],
      });
      claims = verified.payload;
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
    const { sub, org_id: orgId, grant_id: grantId, iat, exp } = claims;
    if (typeof sub !== "string" || !sub || typeof orgId !== "string" || !isUuid(orgId)) return null;
    if (typeof grantId !== "string" || !grantId) return null;
    if (typeof iat !== "number" || typeof exp !== "number" || exp - iat > MAX_LIFETIME_SECONDS) return null;

    const org = orgId.toLowerCase();
    if (!(await grantAlive(grantId))) return null;
    const role = await roleOf(org, sub);
    if (role === "none") return null;
    return {
      orgId: org,
      scope: "org",
      userId: sub,
      role,
      identity: `user:${sub}`,
      rateLimitPerMinute: o.defaultRateLimit,
    } satisfies Principal;
  };
}
