import type { FastifyInstance } from "fastify";
import { PEOPLE_NEED_A_SESSION, signedInUserId } from "../member-roles.js";
import { invitationView, required, roleFromName } from "../people-views.js";
import { principalOf } from "../plugins/auth.js";
import type { Role } from "../principal.js";
import { createInvitationSchema, listInvitationsSchema, revokeInvitationSchema } from "../schemas/invitations.js";
import { listView, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";

/** The page where an invitee accepts (served by the gateway on its public origin). */
export const acceptUrl = (publicUrl: string, token: string): string =>
  `${publicUrl}/invitations/accept?token=${encodeURIComponent(token)}`;

/** Invitations by link: the owner creates one and passes the link on; the token is shown once. */
export function registerInvitationRoutes(scope: FastifyInstance, deps: RouteDeps, publicUrl: string): void {
  const { identity } = deps;
  const owner = { minRole: "owner", sessionOnly: PEOPLE_NEED_A_SESSION } as const;

  scope.post<{ Body: { email: string; role: Role } }>(
    "/invitations",
    { schema: createInvitationSchema, config: owner },
    async (request, reply) => {
      const principal = principalOf(request);
      const res = await identity.createInvitation({
        orgId: principal.orgId,
        email: request.body.email,
        role: roleFromName(request.body.role),
        invitedByUserId: signedInUserId(principal),
      });
      const invitation = invitationView(required(res.invitation, "CreateInvitation's invitation"));
      return reply.code(201).send({ ...invitation, token: res.token, accept_url: acceptUrl(publicUrl, res.token) });
    },
  );

  scope.get<{ Querystring: PageQuery }>(
    "/invitations",
    { schema: listInvitationsSchema, config: { minRole: "viewer", sessionOnly: PEOPLE_NEED_A_SESSION } },
    async (request) => {
      const q = request.query;
      const res = await identity.listInvitations({
        orgId: principalOf(request).orgId,
        page: { page: q.page, perPage: q.per_page },
      });
      return listView(res.invitations.map(invitationView), res.page, q);
    },
  );

  scope.delete<{ Params: { invitation_id: string } }>(
    "/invitations/:invitation_id",
    { schema: revokeInvitationSchema, config: owner },
    async (request, reply) => {
      await identity.revokeInvitation({
        orgId: principalOf(request).orgId,
        invitationId: request.params.invitation_id,
      });
      return reply.code(204).send();
    },
  );
}
