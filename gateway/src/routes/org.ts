import type { FastifyInstance } from "fastify";
import { PEOPLE_NEED_A_SESSION } from "../member-roles.js";
import { principalOf } from "../plugins/auth.js";
import { orgView, required } from "../people-views.js";
import { getOrgSchema, updateOrgSchema } from "../schemas/org.js";
import type { RouteDeps } from "./deps.js";

export function registerOrgRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { identity } = deps;

  scope.get(
    "/org",
    { schema: getOrgSchema, config: { minRole: "viewer", sessionOnly: PEOPLE_NEED_A_SESSION } },
    async (request) => {
      const { org } = await identity.getOrg({ orgId: principalOf(request).orgId });
      return orgView(required(org, "GetOrg's org"));
    },
  );

  scope.patch<{ Body: { name: string } }>(
    "/org",
    { schema: updateOrgSchema, config: { minRole: "owner", sessionOnly: PEOPLE_NEED_A_SESSION } },
    async (request) => {
      const { org } = await identity.updateOrg({ orgId: principalOf(request).orgId, name: request.body.name });
      return orgView(required(org, "UpdateOrg's org"));
    },
  );
}
