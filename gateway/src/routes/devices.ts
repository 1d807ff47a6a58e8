import { create } from "@bufbuild/protobuf";
import { EngagementKind } from "@herald/proto/campaign";
import { type Device, type RegisterDeviceRequest, RegisterDeviceRequestSchema } from "@herald/proto/device";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { listAppId } from "../authorize.js";
import { authorizedDevice as authorizeDevice } from "../device-access.js";
import { principalOf } from "../plugins/auth.js";
import {
  deleteDeviceSchema,
  getDeviceSchema,
  listDevicesSchema,
  optInSchema,
  optOutSchema,
  recordNotificationEventSchema,
  registerDeviceSchema,
  updateDeviceSchema,
} from "../schemas/devices.js";
import { deviceView, listView, platformFromName, type PlatformName, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInBody, appInQuery, type Authorize } from "../early-authorization.js";

export interface RegisterBody {
  app_id: string;
  push_token: string;
  platform: PlatformName;
  external_id?: string;
  language?: string;
  timezone?: string;
  app_version?: string;
  tags?: string[];
}
interface UpdateBody {
  external_id?: string | null;
  language?: string | null;
  timezone?: string | null;
  app_version?: string | null;
  tags?: string[];
}
interface DeviceParams {
  id: string;
}
interface NotificationEventBody {
  campaign_id: string;
  type: "received" | "clicked";
}
const ENGAGEMENT: Record<NotificationEventBody["type"], EngagementKind> = {
  received: EngagementKind.RECEIVED,
  clicked: EngagementKind.CLICKED,
};
/** Paging, the app, and the optional filters of GET /v1/devices. */
interface ListQuery extends PageQuery {
  app_id?: string;
  platform?: PlatformName;
  language?: string;
  opted_in?: boolean;
  invalid?: boolean;
  external_id?: string;
}

/** A register body as the registry's request (shared with the NDJSON import). */
export function registerRequest(appId: string, body: RegisterBody): RegisterDeviceRequest {
  return create(RegisterDeviceRequestSchema, {
    appId,
    pushToken: body.push_token,
    platform: platformFromName(body.platform),
    externalId: body.external_id,
    language: body.language,
    timezone: body.timezone,
    appVersion: body.app_version,
    tags: body.tags === undefined ? undefined : { tags: body.tags },
  });
}

/** Unset keeps the stored value; null and "" both clear it (the registry's "" convention). */
const change = (v: string | null | undefined): string | undefined => (v === null ? "" : v);

const present = (device: Device | undefined, rpc: string): Device => {
  if (!device) throw new Error(`${rpc} answered without a device`);
  return device;
};

export function registerDeviceRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { devices, apps, registrations, campaigns } = deps;
  const byDevice: Authorize = (request) => authorizeDevice(deps, request, (request.params as DeviceParams).id);

  /** The device if the caller may touch it (device-access.ts). */
  const authorizedDevice = (request: FastifyRequest<{ Params: DeviceParams }>): Promise<Device> =>
    authorizeDevice({ devices, apps }, request, request.params.id);

  scope.post<{ Body: RegisterBody }>(
    "/devices/register",
    {
      schema: registerDeviceSchema,
      config: { minRole: "developer", clientKey: "allowed", authorizeBody: appInBody(apps) },
    },
    async (request) => {
      const body = request.body;
      const app = await apps.authorized(principalOf(request), body.app_id);
      const { device } = await registrations.register(registerRequest(app.id, body));
      return deviceView(present(device, "RegisterDevice"));
    },
  );

  scope.get<{ Querystring: ListQuery }>(
    "/devices",
    { schema: listDevicesSchema, config: { minRole: "viewer", authorize: appInQuery(apps) } },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const app = await apps.authorized(principal, listAppId(principal, q.app_id));
      const res = await devices.listDevices({
        appId: app.id,
        page: { page: q.page, perPage: q.per_page },
        platform: q.platform === undefined ? undefined : platformFromName(q.platform),
        language: q.language,
        optedIn: q.opted_in,
        invalid: q.invalid,
        externalId: q.external_id,
      });
      return listView(res.devices.map(deviceView), res.page, q);
    },
  );

  scope.get<{ Params: DeviceParams }>(
    "/devices/:id",
    { schema: getDeviceSchema, config: { minRole: "viewer", clientKey: "device-proof", authorize: byDevice } },
    async (request) => deviceView(await authorizedDevice(request)),
  );

  scope.put<{ Params: DeviceParams; Body: UpdateBody }>(
    "/devices/:id",
    { schema: updateDeviceSchema, config: { minRole: "developer", clientKey: "device-proof", authorize: byDevice } },
    async (request) => {
      const current = await authorizedDevice(request);
      const body = request.body;
      const { device } = await devices.updateDevice({
        id: current.id,
        externalId: change(body.external_id),
        language: change(body.language),
        timezone: change(body.timezone),
        appVersion: change(body.app_version),
        tags: body.tags === undefined ? undefined : { tags: body.tags },
      });
      return deviceView(present(device, "UpdateDevice"));
    },
  );

  scope.delete<{ Params: DeviceParams }>(
    "/devices/:id",
    { schema: deleteDeviceSchema, config: { minRole: "developer", clientKey: "device-proof", authorize: byDevice } },
    async (request, reply) => {
      const current = await authorizedDevice(request);
      await devices.deleteDevice({ id: current.id });
      return reply.code(204).send();
    },
  );

  for (const [path, optedIn, schema] of [
    ["/devices/:id/opt-out", false, optOutSchema],
    ["/devices/:id/opt-in", true, optInSchema],
  ] as const) {
    const config = { minRole: "developer", clientKey: "device-proof", authorize: byDevice } as const;
    scope.post<{ Params: DeviceParams }>(path, { schema, config }, async (request) => {
      const current = await authorizedDevice(request);
      const { device } = await devices.setOptIn({ id: current.id, optedIn });
      return deviceView(present(device, "SetOptIn"));
    });
  }

  scope.post<{ Params: DeviceParams; Body: NotificationEventBody }>(
    "/devices/:id/notification-events",
    {
      schema: recordNotificationEventSchema,
      config: { minRole: "developer", clientKey: "device-proof", authorize: byDevice },
    },
    async (request, reply) => {
      const device = await authorizedDevice(request);
      await campaigns.recordEngagement({
        appId: device.appId,
        deviceId: device.id,
        campaignId: request.body.campaign_id,
        kind: ENGAGEMENT[request.body.type],
      });
      return reply.code(204).send();
    },
  );
}
