import { Role as ProtoRole } from "@herald/proto/identity";
import type { Role } from "../principal.js";

const NAMES: Partial<Record<ProtoRole, Role>> = {
  [ProtoRole.OWNER]: "owner",
  [ProtoRole.ADMIN]: "admin",
  [ProtoRole.DEVELOPER]: "developer",
  [ProtoRole.VIEWER]: "viewer",
};

/** The role's name in tokens and pages; undefined for ROLE_UNSPECIFIED or a future value. */
export function roleName(role: ProtoRole): Role | undefined {
  return NAMES[role];
}
