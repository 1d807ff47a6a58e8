import { isUuid } from "@herald/runtime";
import { createRemoteJWKSet, errors, jwtVerify } from "jose";
import { HttpError } from "../http-errors.js";
import type { Principal } from "../principal.js";

export interface JwtOptions {
  issuer: string;
  jwksUrl: string;
  audience?: string;
  defaultRateLimit: number;
}

/** Verifies a session JWT; null when it is not acceptable. */
export type VerifyJwt = (token: string) => Promise<Principal | null>;

/** Failures to reach the key set are ours, not the caller's: they must not read as 401. */
const JWKS_UNREACHABLE = [errors.JWKSTimeout, errors.JWKSInvalid];

/**
 * Session JWTs of the admin panel, signed by the OAuth server whose key set is published
 * at the JWKS URL (fetched and cached by jose, refreshed when an unknown `kid` shows up).
 * Claims: `org_id` (required), `app_id` (narrows to one app), `sub` (rate-limit identity).
 */
export function createJwtVerifier(opts: JwtOptions): VerifyJwt {
  const keys = createRemoteJWKSet(new URL(opts.jwksUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
  return async (token) => {
    let claims: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, keys, {
        issuer: opts.issuer,
        ...(opts.audience ? { audience: opts.audience } : {}),
        algorithms: ["ES256", "RS256"],
      });
      claims = verified.payload;
    } catch (err) {
      if (JWKS_UNREACHABLE.some((cls) => err instanceof cls) || !(err instanceof errors.JOSEError)) {
        throw new HttpError("ServiceUnavailable", "session verification is unavailable; retry later");
      }
      return null;
    }
    const orgId = claims.org_id;
    const appId = claims.app_id;
    if (typeof orgId !== "string" || !isUuid(orgId)) return null;
    if (appId !== undefined && (typeof appId !== "string" || !isUuid(appId))) return null;
    const sub = typeof claims.sub === "string" && claims.sub ? claims.sub : `org:${orgId}`;
    return {
      orgId: orgId.toLowerCase(),
      scope: appId ? "app" : "org",
      ...(appId ? { appId: appId.toLowerCase() } : {}),
      identity: `jwt:${sub}`,
      rateLimitPerMinute: opts.defaultRateLimit,
    };
  };
}
