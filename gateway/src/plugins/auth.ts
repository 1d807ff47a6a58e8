import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { VerifyJwt } from "../auth/jwt-verifier.js";
import { unauthorized } from "../http-errors.js";
import type { GatewayMetrics } from "./metrics.js";
import type { Principal } from "../principal.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook on every route of the authenticated scope. */
    principal: Principal | null;
  }
}

export interface AuthOptions {
  apiKeys: ApiKeyVerifier;
  /** Absent when session JWTs are not configured. */
  jwt?: VerifyJwt;
  metrics: GatewayMetrics;
}

const API_KEY_PREFIX = "hk_";
/** Base64url JWTs and hk_ keys both fit; anything else cannot be a credential. */
const TOKEN = /^[A-Za-z0-9._~+/=-]{1,8192}$/;

/** The principal of the current request; routes run only after authentication succeeded. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("route reached without authentication");
  return request.principal;
}

/**
 * Authenticates every request of the scope it is registered in: `Authorization: Bearer`
 * with an API key (hk_…) or, when configured, a session JWT. The token is never logged.
 */
export function registerAuth(scope: FastifyInstance, opts: AuthOptions): void {
  scope.decorateRequest("principal", null);
  scope.addHook("onRequest", async (request) => {
    const fail = (reason: string, message: string) => {
      opts.metrics.authFailures.inc({ reason });
      return unauthorized(message);
    };
    const header = request.headers.authorization;
    if (!header)
      throw fail("missing", "missing Authorization header; send Authorization: Bearer <API key or session token>");
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const token = match?.[1];
    if (!token || !TOKEN.test(token))
      throw fail("malformed", "Authorization must be Bearer <API key or session token>");

    if (token.startsWith(API_KEY_PREFIX)) {
      request.principal = await opts.apiKeys.principalFor(token);
      if (!request.principal) throw fail("invalid_key", "invalid or revoked API key");
      return;
    }
    if (!opts.jwt)
      throw fail("jwt_disabled", "invalid credentials: not an API key, and session tokens are not enabled");
    request.principal = await opts.jwt(token);
    if (!request.principal) throw fail("invalid_jwt", "invalid or expired session token");
  });
}
