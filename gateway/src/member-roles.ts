import type { FastifyInstance, FastifySchema } from "fastify";
import { clientKeyDenial, documentClientKey, isClientKey, isClientKeyAccess } from "./client-key-policy.js";
import { forbidden } from "./http-errors.js";
import type { Principal, Role } from "./principal.js";
import { errors } from "./schemas/common.js";

/**
 * What a signed-in member may do, declared once per route and checked in one hook:
 * owner (members, invitations, the organization) ⊃ admin (apps, platform configs, API
 * keys, OAuth clients) ⊃ developer (devices, segments, campaigns, sends, imports) ⊃
 * viewer (every GET, and the one read that takes a body: POST /v1/segments/preview).
 * API keys have no role: server keys keep the rights of their scope (authorize.ts), except
 * on the routes marked `sessionOnly`; client keys may call only the routes that declare
 * `clientKey` (client-key-policy.ts).
 */

declare module "fastify" {
  interface FastifyContextConfig {
    /** The weakest role a signed-in member needs; every route of the scope must declare one. */
    minRole?: Role;
    /** Set on routes for signed-in users only: why an API key is refused (403). */
    sessionOnly?: string;
    /** Other plugins' route settings (e.g. @fastify/cors's `cors`) stay allowed beside these. */
    [setting: string]: unknown;
  }
}

/** Strongest first. */
export const ROLES: readonly Role[] = ["owner", "admin", "developer", "viewer"];

const RANK: Record<Role, number> = { owner: 3, admin: 2, developer: 1, viewer: 0 };

export const isRole = (value: unknown): value is Role => typeof value === "string" && Object.hasOwn(RANK, value);

export const roleAtLeast = (role: Role, min: Role): boolean => RANK[role] >= RANK[min];

export interface RouteAccess {
  minRole: Role;
  sessionOnly?: string | undefined;
}

/** Why the principal may not use a route, or null when it may. */
export function accessDenial(principal: Principal, access: RouteAccess): string | null {
  if (principal.role === undefined) return access.sessionOnly ?? null;
  if (roleAtLeast(principal.role, access.minRole)) return null;
  return `this needs the ${access.minRole} role or higher; your role in this organization is ${principal.role}`;
}

const roleNote = ({ minRole, sessionOnly }: RouteAccess): string =>
  sessionOnly
    ? `Signed-in users with the ${minRole} role or higher; API keys get 403.`
    : `Signed-in users need the ${minRole} role or higher; API keys act within their scope.`;

/** The route's schema with its access rule documented (description, x-herald-min-role, 403). */
function documented(schema: FastifySchema, access: RouteAccess): FastifySchema {
  const doc = schema as { description?: string; response?: Record<string, unknown> };
  const out: FastifySchema & Record<string, unknown> = {
    ...doc,
    description: doc.description ? `${doc.description}\n\n${roleNote(access)}` : roleNote(access),
    "x-herald-min-role": access.minRole,
  };
  if (doc.response) out.response = { ...doc.response, 403: errors[403] };
  return out;
}

/**
 * Registers the role check on every route of the scope, in the request's first hooks
 * (after authentication and the rate limit, before the body is read or validated), so a
 * refusal costs nothing and changes nothing. A route that declares no `minRole` cannot be
 * registered at all: build() fails instead of serving a route without a rule.
 */
export function registerRoleCheck(scope: FastifyInstance): void {
  scope.addHook("onRoute", (route) => {
    const { minRole, sessionOnly, clientKey } = route.config ?? {};
    if (!isRole(minRole)) {
      throw new Error(`${String(route.method)} ${route.url} declares no minRole (see gateway/src/member-roles.ts)`);
    }
    if (clientKey !== undefined && !isClientKeyAccess(clientKey)) {
      throw new Error(`${String(route.method)} ${route.url} declares an unknown clientKey (see client-key-policy.ts)`);
    }
    if (route.schema) route.schema = documentClientKey(documented(route.schema, { minRole, sessionOnly }), clientKey);
  });
  scope.addHook("onRequest", async (request) => {
    if (request.is404) return;
    const { minRole, sessionOnly, clientKey } = request.routeOptions.config;
    const principal = request.principal;
    if (!principal || !isRole(minRole)) throw new Error("role check reached without a principal or a rule");
    const denial = isClientKey(principal)
      ? clientKeyDenial(clientKey, request.headers)
      : accessDenial(principal, { minRole, sessionOnly });
    if (denial) throw forbidden(denial);
  });
}

/** The signed-in user of a session principal (routes marked sessionOnly never see others). */
export function signedInUserId(principal: Principal): string {
  if (!principal.userId) throw new Error("session-only route reached without a signed-in user");
  return principal.userId;
}

/** Why API keys are refused on the organization's people and sign-in routes. */
export const PEOPLE_NEED_A_SESSION =
  "people are managed by signed-in users: the organization, its members, invitations and OAuth clients are not " +
  "available to API keys";
