import type { ApiKey } from "@herald/proto/credential";
import type { FastifyInstance } from "fastify";
import { assertKeyScopeAllowed } from "../authorize.js";
import type { CredentialClient } from "../backends.js";
import { badRequest } from "../http-errors.js";
import { principalOf } from "../plugins/auth.js";
import { createApiKeySchema, listApiKeysSchema, revokeApiKeySchema } from "../schemas/api-keys.js";
import {
  apiKeyView,
  keyKindFromName,
  listView,
  scopeFromName,
  scopeName,
  type KeyKindName,
  type PageQuery,
  type ScopeName,
} from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInPath } from "../early-authorization.js";

interface AppParams {
  app_id: string;
}
interface KeyParams extends AppParams {
  key_id: string;
}
interface CreateKeyBody {
  name: string;
  scope: ScopeName;
  kind: KeyKindName;
  rate_limit_per_minute?: number;
}

const SCAN_PAGE = 200;

/** One key of an app, looked up through the list (keys per app are few). */
async function findKey(credential: CredentialClient, appId: string, keyId: string): Promise<ApiKey | undefined> {
  const wanted = keyId.toLowerCase();
  for (let page = 1; ; page++) {
    const res = await credential.listApiKeys({ appId, page: { page, perPage: SCAN_PAGE } });
    const found = res.keys.find((k) => k.id.toLowerCase() === wanted);
    if (found) return found;
    if (res.keys.length < SCAN_PAGE || page * SCAN_PAGE >= Number(res.page?.total ?? 0)) return undefined;
  }
}

export function registerApiKeyRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { credential, apps } = deps;
  const byApp = appInPath(apps);

  scope.post<{ Params: AppParams; Body: CreateKeyBody }>(
    "/apps/:app_id/api-keys",
    { schema: createApiKeySchema, config: { minRole: "admin", authorize: byApp } },
    async (request, reply) => {
      const principal = principalOf(request);
      const app = await apps.authorized(principal, request.params.app_id);
      const body = request.body;
      assertKeyScopeAllowed(principal, body.scope, "creating an org-scoped key");
      if (body.kind === "client" && body.scope !== "app") {
        throw badRequest("invalid request body: /scope must be app for a client key", [
          { field: "/scope", message: "must be app for a client key" },
        ]);
      }
      const res = await credential.createApiKey({
        appId: app.id,
        name: body.name,
        scope: scopeFromName(body.scope),
        kind: keyKindFromName(body.kind),
        rateLimitPerMinute: body.rate_limit_per_minute ?? 0,
      });
      if (!res.key) throw new Error("CreateApiKey answered without a key");
      return reply.code(201).send({ ...apiKeyView(res.key, deps.defaultRateLimit), secret: res.secret });
    },
  );

  scope.get<{ Params: AppParams; Querystring: PageQuery }>(
    "/apps/:app_id/api-keys",
    { schema: listApiKeysSchema, config: { minRole: "viewer", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const q = request.query;
      const res = await credential.listApiKeys({ appId: app.id, page: { page: q.page, perPage: q.per_page } });
      return listView(
        res.keys.map((k) => apiKeyView(k, deps.defaultRateLimit)),
        res.page,
        q,
      );
    },
  );

  scope.delete<{ Params: KeyParams }>(
    "/apps/:app_id/api-keys/:key_id",
    { schema: revokeApiKeySchema, config: { minRole: "admin", authorize: byApp } },
    async (request, reply) => {
      const principal = principalOf(request);
      const app = await apps.authorized(principal, request.params.app_id);
      const keyId = request.params.key_id;
      if (principal.scope !== "org") {
        // An app-scoped key must not be able to switch off the organization's keys.
        const key = await findKey(credential, app.id, keyId);
        if (key) assertKeyScopeAllowed(principal, scopeName(key.scope), "revoking an org-scoped key");
      }
      await credential.revokeApiKey({ appId: app.id, keyId });
      deps.apiKeys.forgetKey(`key:${keyId.toLowerCase()}`);
      return reply.code(204).send();
    },
  );
}
