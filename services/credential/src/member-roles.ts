import { Role } from "@herald/proto/identity";
import { invalidArgument } from "@herald/runtime";

/** A member's role as stored (memberships.role, invitations.role). */
export type RoleName = "owner" | "admin" | "developer" | "viewer";

const NAMES: Partial<Record<Role, RoleName>> = {
  [Role.OWNER]: "owner",
  [Role.ADMIN]: "admin",
  [Role.DEVELOPER]: "developer",
  [Role.VIEWER]: "viewer",
};

export const ROLE_ENUMS: Record<RoleName, Role> = {
  owner: Role.OWNER,
  admin: Role.ADMIN,
  developer: Role.DEVELOPER,
  viewer: Role.VIEWER,
};

export function roleName(role: Role, field = "role"): RoleName {
  const name = NAMES[role];
  if (!name) throw invalidArgument(`${field} must be owner, admin, developer or viewer`);
  return name;
}
