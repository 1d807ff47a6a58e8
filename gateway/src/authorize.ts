import { badRequest, forbidden } from "./http-errors.js";
import type { Principal } from "./principal.js";
import type { ScopeName } from "./views.js";

/**
 * Scope rules, as pure functions of the principal and the resource's owners. The
 * credential and device services trust their caller; these checks are what keeps one
 * organization, or one app's key, out of another's data.
 */

export interface OwnedApp {
  id: string;
  orgId: string;
}

/** Why access is refused, or null when it is allowed. */
export function appAccessDenial(principal: Principal, app: OwnedApp): string | null {
  if (app.orgId !== principal.orgId) return "the app belongs to another organization";
  if (principal.scope === "app" && principal.appId !== app.id) return "this key is scoped to another app";
  return null;
}

export function assertAppAccess(principal: Principal, app: OwnedApp): void {
  const denial = appAccessDenial(principal, app);
  if (denial) throw forbidden(denial);
}

/** Organization-wide actions: creating and deleting apps, managing org-scoped keys. */
export function assertOrgScope(principal: Principal, action: string): void {
  if (principal.scope !== "org") throw forbidden(`${action} needs an organization-scoped key`);
}

/** An app-scoped key may mint and revoke keys of its own app, never org-wide ones. */
export function assertKeyScopeAllowed(principal: Principal, keyScope: ScopeName, action: string): void {
  if (keyScope === "org") assertOrgScope(principal, action);
}

/**
 * The app whose devices, campaigns or segments a list shows: an app-scoped principal
 * defaults to its own app; an org-scoped one must say which.
 */
export function listAppId(principal: Principal, requested: string | undefined): string {
  if (requested) return requested;
  if (principal.scope === "app" && principal.appId) return principal.appId;
  throw badRequest("invalid query parameter: /app_id is required for organization-scoped keys", [
    { field: "/app_id", message: "is required for organization-scoped keys" },
  ]);
}
