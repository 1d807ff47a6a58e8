import type { Schemas } from "@herald/client";

/** A member's role in the organization. */
export type Role = Schemas["Member"]["role"];

/**
 * What each role may do (owner ⊃ admin ⊃ developer ⊃ viewer): the gateway enforces it,
 * the console only hides or disables what would be refused.
 */
const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

export const ROLES: Role[] = ["owner", "admin", "developer", "viewer"];

export function atLeast(role: Role | undefined, needed: Role): boolean {
  return role !== undefined && RANK[role] >= RANK[needed];
}

/** Apps, platform credentials, Android channels and API keys. */
export const canManageApps = (role: Role | undefined) => atLeast(role, "admin");
/** Devices, segments, campaigns and sends. */
export const canSend = (role: Role | undefined) => atLeast(role, "developer");
/** Members and invitations. */
export const canManageMembers = (role: Role | undefined) => atLeast(role, "owner");
