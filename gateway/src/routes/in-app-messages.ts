import type { InAppMessage } from "@herald/proto/in_app_message";
import { InAppEventType } from "@herald/proto/in_app_message";
import type { FastifyInstance } from "fastify";
import { authorizedDevice } from "../device-access.js";
import {
  deviceInAppMessageView,
  type InAppAudienceJson,
  inAppMessageView,
  type InAppSettingsJson,
  toInAppSettings,
} from "../in-app-message-views.js";
import { principalOf } from "../plugins/auth.js";
import {
  createInAppMessageSchema,
  deleteInAppMessageSchema,
  getInAppMessageSchema,
  listDeviceInAppMessagesSchema,
  listInAppMessagesSchema,
  recordInAppMessageEventSchema,
  updateInAppMessageSchema,
} from "../schemas/in-app-messages.js";
import { listView, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInPath, type Authorize } from "../early-authorization.js";

interface AppParams {
  app_id: string;
}
interface MessageParams extends AppParams {
  message_id: string;
}
interface DeviceParams {
  id: string;
}
interface DeviceMessageParams extends DeviceParams {
  message_id: string;
}
type EventName = "impression" | "click" | "dismiss";

const EVENT: Record<EventName, InAppEventType> = {
  impression: InAppEventType.IMPRESSION,
  click: InAppEventType.CLICK,
  dismiss: InAppEventType.DISMISS,
};

const present = (message: InAppMessage | undefined, rpc: string): InAppMessage => {
  if (!message) throw new Error(`${rpc} answered without a message`);
  return message;
};

/**
 * The app's in-app messages (server keys and sessions), and the device-facing fetch and
 * events, which a client key may call for its own device with the push-token proof.
 */
export function registerInAppMessageRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { inAppMessages, apps } = deps;
  const byApp = appInPath(apps);
  const byDevice: Authorize = (request) => authorizedDevice(deps, request, (request.params as { id: string }).id);

  scope.post<{
    Params: AppParams;
    Body: InAppSettingsJson & { name: string; audience: InAppAudienceJson };
  }>(
    "/apps/:app_id/in-app-messages",
    { schema: createInAppMessageSchema, config: { minRole: "developer", authorize: byApp } },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { message } = await inAppMessages.createInAppMessage({
        appId: app.id,
        settings: toInAppSettings(request.body),
      });
      return reply.code(201).send(inAppMessageView(present(message, "CreateInAppMessage")));
    },
  );

  scope.get<{ Params: AppParams; Querystring: PageQuery }>(
    "/apps/:app_id/in-app-messages",
    { schema: listInAppMessagesSchema, config: { minRole: "viewer", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const q = request.query;
      const res = await inAppMessages.listInAppMessages({
        appId: app.id,
        page: { page: q.page, perPage: q.per_page },
      });
      return listView(res.messages.map(inAppMessageView), res.page, q);
    },
  );

  scope.get<{ Params: MessageParams }>(
    "/apps/:app_id/in-app-messages/:message_id",
    { schema: getInAppMessageSchema, config: { minRole: "viewer", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { message } = await inAppMessages.getInAppMessage({ appId: app.id, id: request.params.message_id });
      return inAppMessageView(present(message, "GetInAppMessage"));
    },
  );

  scope.patch<{ Params: MessageParams; Body: InAppSettingsJson }>(
    "/apps/:app_id/in-app-messages/:message_id",
    { schema: updateInAppMessageSchema, config: { minRole: "developer", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { message } = await inAppMessages.updateInAppMessage({
        appId: app.id,
        id: request.params.message_id,
        settings: toInAppSettings(request.body),
      });
      return inAppMessageView(present(message, "UpdateInAppMessage"));
    },
  );

  scope.delete<{ Params: MessageParams }>(
    "/apps/:app_id/in-app-messages/:message_id",
    { schema: deleteInAppMessageSchema, config: { minRole: "developer", authorize: byApp } },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      await inAppMessages.deleteInAppMessage({ appId: app.id, id: request.params.message_id });
      return reply.code(204).send();
    },
  );

  // The device-facing calls are reads and acknowledgements of what a device showed, not
  // changes to the app: viewers may make them, and client keys for their own device.
  scope.get<{ Params: DeviceParams }>(
    "/devices/:id/in-app-messages",
    {
      schema: listDeviceInAppMessagesSchema,
      config: { minRole: "viewer", clientKey: "device-proof", authorize: byDevice },
    },
    async (request) => {
      const device = await authorizedDevice(deps, request, request.params.id);
      const { messages } = await inAppMessages.listDeviceInAppMessages({ deviceId: device.id });
      return { data: messages.map(deviceInAppMessageView) };
    },
  );

  scope.post<{ Params: DeviceMessageParams; Body: { type: EventName } }>(
    "/devices/:id/in-app-messages/:message_id/events",
    {
      schema: recordInAppMessageEventSchema,
      config: { minRole: "viewer", clientKey: "device-proof", authorize: byDevice },
    },
    async (request, reply) => {
      const device = await authorizedDevice(deps, request, request.params.id);
      await inAppMessages.recordInAppMessageEvent({
        deviceId: device.id,
        messageId: request.params.message_id,
        type: EVENT[request.body.type],
      });
      return reply.code(204).send();
    },
  );
}
