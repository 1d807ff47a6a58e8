import type { FastifyInstance, FastifyRequest } from "fastify";
import { required, roleName, userView } from "../people-views.js";
import { registerRateLimit, type RateLimitOptions } from "../plugins/rate-limit.js";
import { acceptInvitationSchema } from "../schemas/invitations.js";
import type { RouteDeps } from "./deps.js";

/** Accepts per client address and minute: plenty for people, little for a script. */
export const ACCEPTS_PER_ADDRESS_PER_MINUTE = 20;

interface AcceptBody {
  token: string;
  password: string;
  name?: string;
}

/**
 * POST /v1/invitations/accept, the one /v1 route without authentication (the token is
 * the credential): register it in a scope of its own, beside the authenticated one. It
 * is rate-limited per client address instead of per key.
 */
export function registerInvitationAcceptRoute(
  scope: FastifyInstance,
  deps: RouteDeps,
  rateLimit: Omit<RateLimitOptions, "subject">,
  /** The caller's address, as the sign-in throttle sees it (gateway/src/oauth/routes.ts). */
  clientAddress: (request: FastifyRequest) => string,
): void {
  registerRateLimit(scope, {
    ...rateLimit,
    subject: (request) => ({
      identity: `addr:${clientAddress(request)}`,
      limitPerMinute: ACCEPTS_PER_ADDRESS_PER_MINUTE,
    }),
  });
  scope.post<{ Body: AcceptBody }>("/invitations/accept", { schema: acceptInvitationSchema }, async (request) => {
    const { token, password, name } = request.body;
    const res = await deps.identity.acceptInvitation({ token, password, name: name ?? "" });
    const membership = required(res.membership, "AcceptInvitation's membership");
    return {
      user: userView(required(res.user, "AcceptInvitation's user")),
      org_id: membership.orgId,
      role: roleName(membership.role),
    };
  });
}
