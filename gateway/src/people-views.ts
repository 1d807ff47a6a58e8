import {
  Role as ProtoRole,
  type Invitation,
  type Member,
  type Membership,
  type OAuthClient,
  type Org,
  type User,
} from "@herald/proto/identity";
import { roleName as knownRoleName } from "./oauth/member-role-names.js";
import type { Role } from "./principal.js";
import { iso } from "./views.js";

/** Identity messages → the REST API's JSON (the conventions of views.ts). */

const PROTO_ROLES: Record<Role, ProtoRole> = {
  owner: ProtoRole.OWNER,
  admin: ProtoRole.ADMIN,
  developer: ProtoRole.DEVELOPER,
  viewer: ProtoRole.VIEWER,
};

export const roleFromName = (name: Role): ProtoRole => PROTO_ROLES[name];

/** A role the API always has; an unspecified one is a backend bug. */
export function roleName(role: ProtoRole): Role {
  const name = knownRoleName(role);
  if (!name) throw new Error(`unexpected role ${role}`);
  return name;
}

/** A message field the API always has; its absence is a backend bug. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} missing from backend response`);
  return value;
}

export interface UserJson {
  id: string;
  email: string;
  name: string | null;
}

export const userView = (u: User): UserJson => ({ id: u.id, email: u.email, name: u.name === "" ? null : u.name });

export interface OrgJson {
  id: string;
  name: string;
  created_at: string;
}

export const orgView = (o: Org): OrgJson => ({ id: o.id, name: o.name, created_at: iso(o.createdAt) });

export interface MemberJson {
  user: UserJson;
  role: Role;
  joined_at: string;
}

export const memberView = (m: Member): MemberJson => ({
  user: userView(required(m.user, "member's user")),
  role: roleName(m.role),
  joined_at: iso(m.joinedAt),
});

export interface MembershipJson {
  org_id: string;
  org_name: string;
  role: Role;
}

export const membershipView = (m: Membership): MembershipJson => ({
  org_id: m.orgId,
  org_name: m.orgName,
  role: roleName(m.role),
});

export interface InvitationJson {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
  created_at: string;
}

export const invitationView = (i: Invitation): InvitationJson => ({
  id: i.id,
  email: i.email,
  role: roleName(i.role),
  expires_at: iso(i.expiresAt),
  created_at: iso(i.createdAt),
});

export interface OAuthClientJson {
  client_id: string;
  name: string;
  redirect_uris: string[];
  created_at: string;
}

export const oauthClientView = (c: OAuthClient): OAuthClientJson => ({
  client_id: c.clientId,
  name: c.name,
  redirect_uris: [...c.redirectUris],
  created_at: iso(c.createdAt),
});
