import type { ServiceImpl } from "@connectrpc/connect";
import type * as pb from "@herald/proto/identity";
import {
  aborted,
  alreadyExists,
  failedPrecondition,
  fromTimestamp,
  invalidArgument,
  notFound,
  type PoolClient,
  toTimestamp,
  unauthenticated,
} from "@herald/runtime";
import * as check from "./identity-checks.js";
import type { IdentityStore, UserRecord } from "./identity-store.js";
import {
  toInvitation,
  toMember,
  toMembership,
  toOAuthClient,
  toOrg,
  toSigningKey,
  toUser,
} from "./identity-mapping.js";
import {
  DEFAULT_INVITATION_TTL_SECONDS,
  generateInvitationToken,
  hashInvitationToken,
  type InvitationStore,
  isWellFormedToken,
  MAX_INVITATION_TTL_SECONDS,
} from "./invitations.js";
import { roleName } from "./member-roles.js";
import { generateClientId, MAX_REDIRECT_URIS, type OAuthClientStore, redirectUriProblem } from "./oauth-clients.js";
import type { OAuthModelStore } from "./oauth-models.js";
import { normaliseEmail } from "./password-policy.js";
import { hashPassword, verifyAgainstDummy, verifyPassword } from "./passwords.js";
import { isUuid, pageQuery } from "./credential-checks.js";
import type { SigningKeyStore } from "./signing-keys.js";
import { toPageInfo } from "./credential-mapping.js";

export interface IdentityServiceDeps {
  identity: IdentityStore;
  invitations: InvitationStore;
  clients: OAuthClientStore;
  models: OAuthModelStore;
  signingKeys: SigningKeyStore;
}

/** One message for an unknown email and a wrong password, so neither tells which it was. */
const BAD_LOGIN = "invalid email or password";
const NO_INVITATION = "invitation not found, already used, revoked or expired";
const LAST_OWNER = "the organization's last owner cannot be removed or demoted; make another member an owner first";

/** Ids are UUIDs: anything else names no row (and must not reach Postgres). */
function uuid(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(`${what} not found`);
  return value;
}

export class IdentityServiceImpl implements ServiceImpl<typeof pb.IdentityService> {
  constructor(private readonly deps: IdentityServiceDeps) {}

  async authenticate(req: pb.AuthenticateRequest) {
    const email = normaliseEmail(req.email);
    const user = email === undefined ? undefined : await this.deps.identity.findUserByEmail(email);
    const ok = user ? await verifyPassword(user.passwordHash, req.password) : await verifyAgainstDummy(req.password);
    if (!user || !ok) throw unauthenticated(BAD_LOGIN);
    return { user: toUser(user) };
  }

  async getUser(req: pb.GetUserRequest) {
    const user = await this.deps.identity.getUser(uuid(req.userId, "user"));
    if (!user) throw notFound("user not found");
    const memberships = await this.deps.identity.listMemberships(user.id);
    return { user: toUser(user), memberships: memberships.map(toMembership) };
  }

  async getMembership(req: pb.GetMembershipRequest) {
    if (!isUuid(req.orgId) || !isUuid(req.userId)) throw notFound("membership not found");
    const membership = await this.deps.identity.getMembership(req.orgId, req.userId);
    if (!membership) throw notFound("membership not found");
    return { membership: toMembership(membership) };
  }

  async getOrg(req: pb.GetOrgRequest) {
    const org = await this.deps.identity.getOrg(uuid(req.orgId, "organization"));
    if (!org) throw notFound("organization not found");
    return { org: toOrg(org) };
  }

  async updateOrg(req: pb.UpdateOrgRequest) {
    const name = req.name === undefined ? undefined : check.orgName(req.name);
    const result = await this.deps.identity.updateOrg(uuid(req.orgId, "organization"), name);
    if (!result.ok) {
      if (result.reason === "name_taken") throw alreadyExists("an organization with this name already exists");
      throw notFound("organization not found");
    }
    return { org: toOrg(result.org) };
  }

  async listMembers(req: pb.ListMembersRequest) {
    const page = pageQuery(req.page);
    if (!isUuid(req.orgId)) return { members: [], page: toPageInfo(page, 0) };
    const { members, total } = await this.deps.identity.listMembers(req.orgId, page);
    return { members: members.map(toMember), page: toPageInfo(page, total) };
  }

  async updateMemberRole(req: pb.UpdateMemberRoleRequest) {
    const role = roleName(req.role);
    if (!isUuid(req.orgId) || !isUuid(req.userId)) throw notFound("member not found");
    const result = await this.deps.identity.updateMemberRole(req.orgId, req.userId, role);
    if (!result.ok)
      throw result.reason === "last_owner" ? failedPrecondition(LAST_OWNER) : notFound("member not found");
    return { member: toMember(result.member) };
  }

  async removeMember(req: pb.RemoveMemberRequest) {
    if (!isUuid(req.orgId) || !isUuid(req.userId)) throw notFound("member not found");
    const result = await this.deps.identity.removeMember(req.orgId, req.userId);
    if (!result.ok)
      throw result.reason === "last_owner" ? failedPrecondition(LAST_OWNER) : notFound("member not found");
    return {};
  }

  async createInvitation(req: pb.CreateInvitationRequest) {
    const email = check.email(req.email);
    const role = roleName(req.role);
    const ttlSeconds = req.ttlSeconds || DEFAULT_INVITATION_TTL_SECONDS;
    if (ttlSeconds > MAX_INVITATION_TTL_SECONDS) {
      throw invalidArgument(`ttl_seconds must be at most ${MAX_INVITATION_TTL_SECONDS}`);
    }
    const invitedBy = req.invitedByUserId || null;
    if (invitedBy !== null && !(isUuid(invitedBy) && (await this.deps.identity.getUser(invitedBy)))) {
      throw invalidArgument("invited_by_user_id is not a user");
    }
    const org = await this.deps.identity.getOrg(uuid(req.orgId, "organization"));
    if (!org) throw notFound("organization not found");
    if (await this.deps.identity.isMemberByEmail(org.id, email)) {
      throw alreadyExists(`${email} is already a member of this organization`);
    }
    const token = generateInvitationToken();
    const invitation = await this.deps.invitations.create({
      orgId: org.id,
      email,
      role,
      invitedBy,
      tokenHash: hashInvitationToken(token),
      ttlSeconds,
    });
    return { invitation: toInvitation(invitation), token };
  }

  /** Pending invitations only: accepted ones are members, revoked and expired ones are gone. */
  async listInvitations(req: pb.ListInvitationsRequest) {
    const page = pageQuery(req.page);
    if (!isUuid(req.orgId)) return { invitations: [], page: toPageInfo(page, 0) };
    const { invitations, total } = await this.deps.invitations.listPending(req.orgId, page);
    return { invitations: invitations.map(toInvitation), page: toPageInfo(page, total) };
  }

  async revokeInvitation(req: pb.RevokeInvitationRequest) {
    if (!isUuid(req.orgId) || !isUuid(req.invitationId)) throw notFound("invitation not found");
    if (!(await this.deps.invitations.revoke(req.orgId, req.invitationId))) throw notFound("invitation not found");
    return {};
  }

  async peekInvitation(req: pb.PeekInvitationRequest) {
    if (!isWellFormedToken(req.token)) throw notFound(NO_INVITATION);
    const invitation = await this.deps.invitations.findPending(hashInvitationToken(req.token));
    if (!invitation) throw notFound(NO_INVITATION);
    const user = await this.deps.identity.findUserByEmail(invitation.email);
    return { invitation: toInvitation(invitation), orgName: invitation.orgName, userExists: user !== undefined };
  }

  async acceptInvitation(req: pb.AcceptInvitationRequest) {
    if (!isWellFormedToken(req.token)) throw notFound(NO_INVITATION);
    const { identity } = this.deps;
    const accepted = await this.deps.invitations.accept(hashInvitationToken(req.token), async (invitation, tx) => {
      const user = await this.invitedUser(invitation.email, req, tx);
      await identity.addMembership(invitation.orgId, user.id, invitation.role, tx);
      const membership = await identity.getMembership(invitation.orgId, user.id, tx);
      return { user: toUser(user), membership: toMembership(membership!) };
    });
    if (!accepted) throw notFound(NO_INVITATION);
    return accepted;
  }

  /** The existing user, if their password is right, or a new one with the given password. */
  private async invitedUser(email: string, req: pb.AcceptInvitationRequest, tx: PoolClient): Promise<UserRecord> {
    const existing = await this.deps.identity.findUserByEmail(email);
    if (existing) {
      if (await verifyPassword(existing.passwordHash, req.password)) return existing;
      throw unauthenticated("wrong password for the existing account of this email");
    }
    const password = check.newPassword(req.password);
    const name = check.personName(req.name);
    const user = await this.deps.identity.createUser({ email, name, passwordHash: await hashPassword(password) }, tx);
    // Someone registered the email between the two statements: the token stays usable.
    if (!user) throw aborted("the account of this email was created meanwhile; try again");
    return user;
  }

  async createOAuthClient(req: pb.CreateOAuthClientRequest) {
    const name = check.clientName(req.name);
    if (req.redirectUris.length < 1 || req.redirectUris.length > MAX_REDIRECT_URIS) {
      throw invalidArgument(`redirect_uris must hold 1 to ${MAX_REDIRECT_URIS} URLs`);
    }
    req.redirectUris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri);
      if (problem) throw invalidArgument(`redirect_uris[${i}] ${problem}`);
    });
    const org = await this.deps.identity.getOrg(uuid(req.orgId, "organization"));
    if (!org) throw notFound("organization not found");
    const client = await this.deps.clients.create({
      clientId: generateClientId(),
      orgId: org.id,
      name,
      redirectUris: [...new Set(req.redirectUris)],
    });
    return { client: toOAuthClient(client) };
  }

  async listOAuthClients(req: pb.ListOAuthClientsRequest) {
    const page = pageQuery(req.page);
    if (!isUuid(req.orgId)) return { clients: [], page: toPageInfo(page, 0) };
    const { clients, total } = await this.deps.clients.list(req.orgId, page);
    return { clients: clients.map(toOAuthClient), page: toPageInfo(page, total) };
  }

  async getOAuthClient(req: pb.GetOAuthClientRequest) {
    const client = req.clientId.length <= 200 ? await this.deps.clients.get(req.clientId) : undefined;
    if (!client) throw notFound("OAuth client not found");
    return { client: toOAuthClient(client) };
  }

  async deleteOAuthClient(req: pb.DeleteOAuthClientRequest) {
    if (!isUuid(req.orgId) || !(await this.deps.clients.delete(req.orgId, req.clientId))) {
      throw notFound("OAuth client not found");
    }
    return {};
  }

  async oAuthUpsert(req: pb.OAuthUpsertRequest) {
    await this.deps.models.upsert({
      kind: check.modelKind(req.kind),
      id: check.modelKey(req.id, "id"),
      payload: check.modelPayload(req.payload),
      expiresAt: req.expiresAt ? fromTimestamp(req.expiresAt) : null,
      grantId: check.optionalKey(req.grantId, "grant_id"),
      uid: check.optionalKey(req.uid, "uid"),
      userCode: check.optionalKey(req.userCode, "user_code"),
    });
    return {};
  }

  async oAuthFind(req: pb.OAuthFindRequest) {
    const kind = check.modelKind(req.kind);
    const { key } = req;
    if (key.case === undefined) throw invalidArgument("one of id, uid or user_code is required");
    const by = key.case === "userCode" ? "user_code" : key.case;
    const found = await this.deps.models.find(kind, { by, value: check.modelKey(key.value, by) });
    if (!found) return {};
    return { payload: found.payload, consumedAt: found.consumedAt ? toTimestamp(found.consumedAt) : undefined };
  }

  async oAuthConsume(req: pb.OAuthConsumeRequest) {
    await this.deps.models.consume(check.modelKind(req.kind), check.modelKey(req.id, "id"));
    return {};
  }

  async oAuthDestroy(req: pb.OAuthDestroyRequest) {
    await this.deps.models.destroy(check.modelKind(req.kind), check.modelKey(req.id, "id"));
    return {};
  }

  async oAuthRevokeByGrantId(req: pb.OAuthRevokeByGrantIdRequest) {
    await this.deps.models.revokeByGrantId(check.modelKey(req.grantId, "grant_id"));
    return {};
  }

  async getSigningKeys() {
    return { keys: (await this.deps.signingKeys.keys()).map(toSigningKey) };
  }
}
