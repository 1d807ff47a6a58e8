import type { FastifyInstance } from "fastify";
import { assertOrgScope } from "../authorize.js";
import { principalOf } from "../plugins/auth.js";
import { createAppSchema, deleteAppSchema, getAppSchema, listAppsSchema, updateAppSchema } from "../schemas/apps.js";
import { appView, listView, platformFromName, type PlatformName, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInPath, type Authorize } from "../early-authorization.js";

interface AppFields {
  name: string;
  platform: PlatformName;
  bundle_id: string;
}
interface AppParams {
  app_id: string;
}

export function registerAppRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { credential, apps } = deps;
  const byApp = appInPath(apps);
  const orgScope =
    (action: string): Authorize =>
    async (request) =>
      assertOrgScope(principalOf(request), action);

  scope.post<{ Body: AppFields }>(
    "/apps",
    { schema: createAppSchema, config: { minRole: "admin", authorize: orgScope("creating an app") } },
    async (request, reply) => {
      const principal = principalOf(request);
      assertOrgScope(principal, "creating an app");
      const { app } = await credential.createApp({
        orgId: principal.orgId,
        name: request.body.name,
        platform: platformFromName(request.body.platform),
        bundleId: request.body.bundle_id,
      });
      if (!app) throw new Error("CreateApp answered without an app");
      apps.remember(app);
      return reply.code(201).send(appView(app));
    },
  );

  scope.get<{ Querystring: PageQuery }>(
    "/apps",
    { schema: listAppsSchema, config: { minRole: "viewer" } },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const res = await credential.listApps({
        orgId: principal.orgId,
        page: { page: q.page, perPage: q.per_page },
        ...(principal.scope === "app" ? { appId: principal.appId } : {}),
      });
      return listView(res.apps.map(appView), res.page, q);
    },
  );

  scope.get<{ Params: AppParams }>(
    "/apps/:app_id",
    { schema: getAppSchema, config: { minRole: "viewer", authorize: byApp } },
    async (request) => appView(await apps.authorized(principalOf(request), request.params.app_id)),
  );

  scope.put<{ Params: AppParams; Body: Partial<AppFields> }>(
    "/apps/:app_id",
    { schema: updateAppSchema, config: { minRole: "admin", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const body = request.body;
      const res = await credential.updateApp({
        appId: app.id,
        name: body.name,
        platform: body.platform === undefined ? undefined : platformFromName(body.platform),
        bundleId: body.bundle_id,
      });
      if (!res.app) throw new Error("UpdateApp answered without an app");
      apps.remember(res.app);
      return appView(res.app);
    },
  );

  scope.delete<{ Params: AppParams }>(
    "/apps/:app_id",
    { schema: deleteAppSchema, config: { minRole: "admin", authorize: orgScope("deleting an app") } },
    async (request, reply) => {
      const principal = principalOf(request);
      assertOrgScope(principal, "deleting an app");
      const app = await apps.authorized(principal, request.params.app_id);
      await credential.deleteApp({ appId: app.id });
      apps.forget(app.id);
      // The app's keys went with it; which cached principals they were is not known here.
      deps.apiKeys.forgetAll();
      return reply.code(204).send();
    },
  );
}
