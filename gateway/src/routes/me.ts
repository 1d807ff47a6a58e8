import type { FastifyInstance } from "fastify";
import { signedInUserId } from "../member-roles.js";
import { principalOf } from "../plugins/auth.js";
import { membershipView, required, userView } from "../people-views.js";
import { forbidden } from "../http-errors.js";
import { getMeSchema } from "../schemas/members.js";
import type { RouteDeps } from "./deps.js";

export function registerMeRoute(scope: FastifyInstance, deps: RouteDeps): void {
  scope.get(
    "/me",
    {
      schema: getMeSchema,
      config: { minRole: "viewer", sessionOnly: "GET /v1/me describes a signed-in user; an API key has none" },
    },
    async (request) => {
      const principal = principalOf(request);
      const res = await deps.identity.getUser({ userId: signedInUserId(principal) });
      const current = res.memberships.find((m) => m.orgId === principal.orgId);
      if (!current) throw forbidden("you are not a member of this session's organization any more");
      return {
        user: userView(required(res.user, "GetUser's user")),
        org: { id: current.orgId, name: current.orgName },
        role: principal.role,
        memberships: res.memberships.map(membershipView),
      };
    },
  );
}
