import { randomBytes } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { importJWK, SignJWT, type JWK } from "jose";
import type { IdentityClient } from "../src/backends.js";
import type { Role } from "../src/principal.js";

export interface SessionSubject {
  userId: string;
  orgId: string;
  /** Goes into the token like the issuer's; the gateway trusts the membership's current role. */
  role: Role;
  clientId?: string;
  ttlSeconds?: number;
}

/**
 * Session access tokens minted the way the gateway's OAuth server issues them
 * (gateway/src/oauth/provider.ts), so that tests of roles need no browser sign-in: ES256
 * with the active key of IdentityService.GetSigningKeys, header kid and typ at+jwt,
 * claims iss, aud `${iss}/v1`, sub, org_id, role, grant_id, client_id, scope, jti, iat
 * and exp. The grant the token names is stored as the provider stores it, so the
 * verifier finds it alive.
 */
export class SessionTokens {
  constructor(
    private readonly identity: IdentityClient,
    /** The gateway's HERALD_PUBLIC_URL. */
    private readonly issuer: string,
  ) {}

  async mint(subject: SessionSubject): Promise<string> {
    const { keys } = await this.identity.getSigningKeys({});
    const active = keys.find((k) => k.active);
    if (!active) throw new Error("the identity service has no active signing key");
    const key = await importJWK(JSON.parse(active.privateJwk) as JWK, "ES256");
    const clientId = subject.clientId ?? "herald-console";
    const ttl = subject.ttlSeconds ?? 900;
    const now = Math.floor(Date.now() / 1000);
    const grantId = randomBytes(16).toString("base64url");
    await this.identity.oAuthUpsert({
      kind: "Grant",
      id: grantId,
      payload: JSON.stringify({
        kind: "Grant",
        jti: grantId,
        accountId: subject.userId,
        clientId,
        iat: now,
        exp: now + 14 * 24 * 3600,
        openid: { scope: "openid offline_access" },
      }),
      expiresAt: timestampFromDate(new Date((now + 14 * 24 * 3600) * 1000)),
    });
    return new SignJWT({
      org_id: subject.orgId,
      role: subject.role,
      grant_id: grantId,
      client_id: clientId,
      scope: "openid offline_access",
    })
      .setProtectedHeader({ alg: "ES256", kid: active.kid, typ: "at+jwt" })
      .setIssuer(this.issuer)
      .setAudience(`${this.issuer}/v1`)
      .setSubject(subject.userId)
      .setJti(randomBytes(16).toString("base64url"))
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .sign(key);
  }
}

/** A signed-in member of the test's organization. */
export interface Member {
  userId: string;
  email: string;
  password: string;
  role: Role;
  /** A session access token of the member. */
  token: string;
}

/** A password the policy accepts: 20 random letters and digits. */
export const newPassword = (): string =>
  randomBytes(30)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 20);

/** The bootstrap owner (the credential service's HERALD_BOOTSTRAP_ADMIN_*), signed in. */
export async function bootstrapOwner(
  identity: IdentityClient,
  tokens: SessionTokens,
  admin: { email: string; password: string },
): Promise<Member & { orgId: string }> {
  const { user } = await identity.authenticate(admin);
  if (!user) throw new Error("Authenticate answered without a user");
  const { memberships } = await identity.getUser({ userId: user.id });
  const orgId = memberships[0]?.orgId;
  if (!orgId) throw new Error("the bootstrap admin belongs to no organization");
  const token = await tokens.mint({ userId: user.id, orgId, role: "owner" });
  return { userId: user.id, email: admin.email, password: admin.password, role: "owner", token, orgId };
}
