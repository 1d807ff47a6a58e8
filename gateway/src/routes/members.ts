import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyInstance } from "fastify";
import { conflict } from "../http-errors.js";
import { PEOPLE_NEED_A_SESSION } from "../member-roles.js";
import { memberView, required, roleFromName } from "../people-views.js";
import { principalOf } from "../plugins/auth.js";
import type { Role } from "../principal.js";
import { listMembersSchema, removeMemberSchema, updateMemberSchema } from "../schemas/members.js";
import { listView, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";

interface MemberParams {
  user_id: string;
}

/**
 * The identity service refuses to leave an organization without an owner with
 * FAILED_PRECONDITION; for these two routes that is a conflict with the organization's
 * state (409), not the semantic error (422) the code means elsewhere.
 */
async function lastOwnerIsConflict<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.FailedPrecondition) throw conflict(err.rawMessage);
    throw err;
  }
}

export function registerMemberRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { identity } = deps;
  const owner = { minRole: "owner", sessionOnly: PEOPLE_NEED_A_SESSION } as const;

  scope.get<{ Querystring: PageQuery }>(
    "/members",
    { schema: listMembersSchema, config: { minRole: "viewer", sessionOnly: PEOPLE_NEED_A_SESSION } },
    async (request) => {
      const q = request.query;
      const res = await identity.listMembers({
        orgId: principalOf(request).orgId,
        page: { page: q.page, perPage: q.per_page },
      });
      return listView(res.members.map(memberView), res.page, q);
    },
  );

  scope.patch<{ Params: MemberParams; Body: { role: Role } }>(
    "/members/:user_id",
    { schema: updateMemberSchema, config: owner },
    async (request) => {
      const { member } = await lastOwnerIsConflict(
        identity.updateMemberRole({
          orgId: principalOf(request).orgId,
          userId: request.params.user_id,
          role: roleFromName(request.body.role),
        }),
      );
      return memberView(required(member, "UpdateMemberRole's member"));
    },
  );

  scope.delete<{ Params: MemberParams }>(
    "/members/:user_id",
    { schema: removeMemberSchema, config: owner },
    async (request, reply) => {
      await lastOwnerIsConflict(
        identity.removeMember({ orgId: principalOf(request).orgId, userId: request.params.user_id }),
      );
      return reply.code(204).send();
    },
  );
}
