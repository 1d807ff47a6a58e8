import { randomBytes } from "node:crypto";
import { compactVerify, decodeJwt, decodeProtectedHeader } from "jose";
import type { ServiceAccount, ServiceAccountStore } from "./service-accounts.js";

/** RFC 7523 §2.1. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
/** FCM also accepts tokens for the broader cloud-platform scope. */
export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Google: "Token must be a short-lived token (60 minutes)". */
export const MAX_ASSERTION_LIFETIME_S = 3600;
/** How far ahead of the simulator's clock an assertion's `iat` may be. */
export const MAX_CLOCK_SKEW_S = 60;

/** An OAuth 2.0 error answer (RFC 6749 §5.2), worded as Google's token endpoint words it where known. */
export interface OAuthRefusal {
  status: number;
  error: string;
  description: string;
}

export type AssertionCheck =
  | { ok: true; account: ServiceAccount; scopes: string[] }
  | { ok: false; refusal: OAuthRefusal };

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const grant = (description: string): AssertionCheck => ({
  ok: false,
  refusal: { status: 400, error: "invalid_grant", description },
});
const BAD_SIGNATURE = "Invalid JWT Signature.";
const BAD_TIMES =
  "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.";

/**
 * Verifies a service account's JWT-bearer assertion: RS256 signed by the registered key
 * of the account named in `iss` (and `kid` equal to its key id when both are known),
 * `aud` exactly this token endpoint, `iat`/`exp` within an hour of each other with `exp`
 * in the future and `iat` not ahead of the clock, no `sub` other than the account
 * itself (no domain-wide delegation), and a scope that lets the token send with FCM.
 * Google would issue a token for any valid scope and refuse it at send time; the
 * simulator, which serves only FCM, refuses such a scope here.
 */
export async function verifyAssertion(
  assertion: string,
  accounts: ServiceAccountStore,
  tokenUri: string,
  nowS: number,
): Promise<AssertionCheck> {
  if (!COMPACT_JWS.test(assertion)) return grant("Invalid JWT: the assertion is not a signed JWT.");
  let alg: unknown;
  let kid: unknown;
  let claims: Record<string, unknown>;
  try {
    ({ alg, kid } = decodeProtectedHeader(assertion));
    claims = decodeJwt(assertion);
  } catch {
    return grant("Invalid JWT: the assertion is not a signed JWT.");
  }
  const account = typeof claims.iss === "string" ? accounts.get(claims.iss) : undefined;
  if (!account) return grant("Invalid grant: account not found");
  if (alg !== "RS256") return grant(BAD_SIGNATURE);
  if (kid !== undefined && account.privateKeyId !== null && kid !== account.privateKeyId) return grant(BAD_SIGNATURE);
  try {
    await compactVerify(assertion, account.publicKey, { algorithms: ["RS256"] });
  } catch {
    return grant(BAD_SIGNATURE);
  }
  if (claims.aud !== tokenUri) return grant(`Invalid JWT: Failed audience check. The right audience is ${tokenUri}`);
  const { iat, exp } = claims;
  if (
    typeof iat !== "number" ||
    typeof exp !== "number" ||
    exp <= iat ||
    exp - iat > MAX_ASSERTION_LIFETIME_S ||
    exp <= nowS ||
    iat > nowS + MAX_CLOCK_SKEW_S
  ) {
    return grant(BAD_TIMES);
  }
  if (claims.sub !== undefined && claims.sub !== account.clientEmail) {
    return {
      ok: false,
      refusal: {
        status: 401,
        error: "unauthorized_client",
        description:
          "Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.",
      },
    };
  }
  const scopes = typeof claims.scope === "string" ? claims.scope.split(" ").filter((s) => s.length > 0) : [];
  if (scopes.length === 0)
    return {
      ok: false,
      refusal: { status: 400, error: "invalid_scope", description: "Empty or missing scope not allowed." },
    };
  if (!scopes.includes(FCM_SCOPE) && !scopes.includes(CLOUD_PLATFORM_SCOPE)) {
    return {
      ok: false,
      refusal: {
        status: 400,
        error: "invalid_scope",
        description: "Invalid OAuth scope or ID token audience provided.",
      },
    };
  }
  return { ok: true, account, scopes };
}

interface AccessToken {
  account: ServiceAccount;
  expiresAtMs: number;
}

export type AccessTokenCheck =
  | { ok: true; account: ServiceAccount }
  | { ok: false; reason: "unknown" | "expired" | "revoked" };

/** Access tokens the simulator issued; only these authenticate FCM sends. */
export class AccessTokenStore {
  private readonly tokens = new Map<string, AccessToken>();

  constructor(
    private readonly accounts: ServiceAccountStore,
    private readonly pruneAbove = 100_000,
  ) {}

  /** A Google-looking opaque token ("ya29." prefix), valid for `ttlS`. */
  issue(account: ServiceAccount, ttlS: number, nowMs: number): string {
    if (this.tokens.size >= this.pruneAbove) this.prune(nowMs);
    const token = `ya29.${randomBytes(48).toString("base64url")}`;
    this.tokens.set(token, { account, expiresAtMs: nowMs + ttlS * 1000 });
    account.tokensIssued += 1;
    return token;
  }

  check(token: string, nowMs: number): AccessTokenCheck {
    const issued = this.tokens.get(token);
    if (!issued) return { ok: false, reason: "unknown" };
    // Deleted or re-registered since: the token died with the account it was issued to.
    if (this.accounts.get(issued.account.clientEmail) !== issued.account) return { ok: false, reason: "revoked" };
    if (nowMs >= issued.expiresAtMs) return { ok: false, reason: "expired" };
    return { ok: true, account: issued.account };
  }

  private prune(nowMs: number): void {
    for (const [token, issued] of this.tokens) if (nowMs >= issued.expiresAtMs) this.tokens.delete(token);
  }
}
