import type { FastifyInstance } from "fastify";
import { PEOPLE_NEED_A_SESSION } from "../member-roles.js";
import { oauthClientView, required } from "../people-views.js";
import { principalOf } from "../plugins/auth.js";
import { createOAuthClientSchema, deleteOAuthClientSchema, listOAuthClientsSchema } from "../schemas/oauth-clients.js";
import { listView, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";

/** The organization's own OAuth clients (a CLI with a loopback redirect, a script...). */
export function registerOAuthClientRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { identity } = deps;
  const admin = { minRole: "admin", sessionOnly: PEOPLE_NEED_A_SESSION } as const;

  scope.post<{ Body: { name: string; redirect_uris: string[] } }>(
    "/oauth-clients",
    { schema: createOAuthClientSchema, config: admin },
    async (request, reply) => {
      const { client } = await identity.createOAuthClient({
        orgId: principalOf(request).orgId,
        name: request.body.name,
        redirectUris: request.body.redirect_uris,
      });
      return reply.code(201).send(oauthClientView(required(client, "CreateOAuthClient's client")));
    },
  );

  scope.get<{ Querystring: PageQuery }>(
    "/oauth-clients",
    { schema: listOAuthClientsSchema, config: { minRole: "viewer", sessionOnly: PEOPLE_NEED_A_SESSION } },
    async (request) => {
      const q = request.query;
      const res = await identity.listOAuthClients({
        orgId: principalOf(request).orgId,
        page: { page: q.page, perPage: q.per_page },
      });
      return listView(res.clients.map(oauthClientView), res.page, q);
    },
  );

  scope.delete<{ Params: { client_id: string } }>(
    "/oauth-clients/:client_id",
    { schema: deleteOAuthClientSchema, config: admin },
    async (request, reply) => {
      await identity.deleteOAuthClient({ orgId: principalOf(request).orgId, clientId: request.params.client_id });
      return reply.code(204).send();
    },
  );
}
