import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PutPlatformConfigRequestSchema } from "@herald/proto/credential";
import type { FastifyInstance } from "fastify";
import { principalOf } from "../plugins/auth.js";
import { notFound } from "../http-errors.js";
import {
  getPlatformConfigsSchema,
  getWebPushConfigSchema,
  putPlatformConfigSchema,
} from "../schemas/platform-config.js";
import { platformConfigsView, platformConfigView } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInPath } from "../early-authorization.js";

type PlatformConfigBody =
  | {
      platform: "ios";
      apns_p8_key: string;
      apns_key_id: string;
      apns_team_id: string;
      apns_topic?: string;
      apns_environment?: "production" | "sandbox";
    }
  | { platform: "android"; fcm_service_account: string | Record<string, unknown> }
  | { platform: "web"; vapid_public_key?: string; vapid_private_key?: string; vapid_subject: string };

type Credentials = MessageInitShape<typeof PutPlatformConfigRequestSchema>["credentials"];

/** REST field names → the credential service's oneof; empty strings let it apply defaults. */
export function toCredentials(body: PlatformConfigBody): Credentials {
  switch (body.platform) {
    case "ios":
      return {
        case: "apns",
        value: {
          p8Key: body.apns_p8_key,
          keyId: body.apns_key_id,
          teamId: body.apns_team_id,
          topic: body.apns_topic ?? "",
          environment: body.apns_environment ?? "",
        },
      };
    case "android": {
      const account = body.fcm_service_account;
      return {
        case: "fcm",
        value: { serviceAccountJson: typeof account === "string" ? account : JSON.stringify(account) },
      };
    }
    case "web":
      return {
        case: "vapid",
        value: {
          publicKey: body.vapid_public_key ?? "",
          privateKey: body.vapid_private_key ?? "",
          subject: body.vapid_subject,
        },
      };
  }
}

interface AppParams {
  app_id: string;
}

export function registerPlatformConfigRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { credential, apps } = deps;
  const byApp = appInPath(apps);

  scope.post<{ Params: AppParams; Body: PlatformConfigBody }>(
    "/apps/:app_id/platform-config",
    { schema: putPlatformConfigSchema, config: { minRole: "admin", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { config } = await credential.putPlatformConfig({
        appId: app.id,
        credentials: toCredentials(request.body),
      });
      if (!config) throw new Error("PutPlatformConfig answered without a config");
      return platformConfigView(config);
    },
  );

  scope.get<{ Params: AppParams }>(
    "/apps/:app_id/platform-config",
    { schema: getPlatformConfigsSchema, config: { minRole: "viewer", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { configs } = await credential.getPlatformConfigs({ appId: app.id });
      return platformConfigsView(app.id, configs);
    },
  );

  scope.get<{ Params: AppParams }>(
    "/apps/:app_id/web-push-config",
    { schema: getWebPushConfigSchema, config: { minRole: "viewer", clientKey: "allowed", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { configs } = await credential.getPlatformConfigs({ appId: app.id });
      const web = configs.find((c) => c.details.case === "vapid");
      if (web?.details.case !== "vapid") throw notFound("the app has no web platform config");
      return { app_id: app.id, vapid_public_key: web.details.value.publicKey };
    },
  );
}
