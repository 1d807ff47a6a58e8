import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  InvitationSchema,
  MemberSchema,
  MembershipSchema,
  OAuthClientSchema,
  OrgSchema,
  SigningKeySchema,
  UserSchema,
} from "@herald/proto/identity";
import { toTimestamp } from "@herald/runtime";
import type { MemberRecord, MembershipRecord, OrgRecord, UserRecord } from "./identity-store.js";
import type { InvitationRecord } from "./invitations.js";
import { ROLE_ENUMS } from "./member-roles.js";
import type { OAuthClientRecord } from "./oauth-clients.js";
import type { SigningKey } from "./signing-keys.js";

/** Identity records to response messages. */

export const toUser = (user: UserRecord): MessageInitShape<typeof UserSchema> => ({
  id: user.id,
  email: user.email,
  name: user.name,
  createdAt: toTimestamp(user.createdAt),
});

export const toMembership = (m: MembershipRecord): MessageInitShape<typeof MembershipSchema> => ({
  orgId: m.orgId,
  orgName: m.orgName,
  userId: m.userId,
  role: ROLE_ENUMS[m.role],
  createdAt: toTimestamp(m.createdAt),
});

export const toMember = (m: MemberRecord): MessageInitShape<typeof MemberSchema> => ({
  user: toUser(m.user),
  role: ROLE_ENUMS[m.role],
  joinedAt: toTimestamp(m.joinedAt),
});

export const toOrg = (org: OrgRecord): MessageInitShape<typeof OrgSchema> => ({
  id: org.id,
  name: org.name,
  createdAt: toTimestamp(org.createdAt),
});

export const toInvitation = (i: InvitationRecord): MessageInitShape<typeof InvitationSchema> => ({
  id: i.id,
  orgId: i.orgId,
  email: i.email,
  role: ROLE_ENUMS[i.role],
  invitedByUserId: i.invitedBy ?? "",
  createdAt: toTimestamp(i.createdAt),
  expiresAt: toTimestamp(i.expiresAt),
  acceptedAt: i.acceptedAt ? toTimestamp(i.acceptedAt) : undefined,
  revokedAt: i.revokedAt ? toTimestamp(i.revokedAt) : undefined,
});

export const toOAuthClient = (c: OAuthClientRecord): MessageInitShape<typeof OAuthClientSchema> => ({
  clientId: c.clientId,
  orgId: c.orgId,
  name: c.name,
  redirectUris: c.redirectUris,
  createdAt: toTimestamp(c.createdAt),
});

export const toSigningKey = (k: SigningKey): MessageInitShape<typeof SigningKeySchema> => ({
  kid: k.kid,
  privateJwk: k.privateJwk,
  active: k.active,
  createdAt: toTimestamp(k.createdAt),
  retiredAt: k.retiredAt ? toTimestamp(k.retiredAt) : undefined,
});
