import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type AndroidChannel,
  type AndroidChannelSettingsSchema,
  ChannelImportance,
} from "@herald/proto/android_channel";
import type { FastifyInstance } from "fastify";
import { noneMatch, strongEtag } from "../etag.js";
import { principalOf } from "../plugins/auth.js";
import {
  createAndroidChannelSchema,
  deleteAndroidChannelSchema,
  getAndroidChannelSchema,
  listAndroidChannelsSchema,
  updateAndroidChannelSchema,
} from "../schemas/android-channels.js";
import { iso } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInPath } from "../early-authorization.js";

type Importance = "min" | "low" | "default" | "high" | "max";

const IMPORTANCE: Record<Importance, ChannelImportance> = {
  min: ChannelImportance.MIN,
  low: ChannelImportance.LOW,
  default: ChannelImportance.DEFAULT,
  high: ChannelImportance.HIGH,
  max: ChannelImportance.MAX,
};
const IMPORTANCE_NAME = Object.fromEntries(Object.entries(IMPORTANCE).map(([k, v]) => [v, k])) as Record<
  ChannelImportance,
  Importance
>;

/** The most channels an app may have (services/device-registry/src/android-channel-service.ts). */
const CHANNELS_PER_APP = 100;

interface ChannelSettingsJson {
  name?: string;
  description?: string;
  importance?: Importance;
  sound?: string | null;
  vibration?: boolean | number[];
  lights?: boolean | string;
  badge?: boolean;
  group?: string | null;
}

export interface AndroidChannelJson extends Required<Omit<ChannelSettingsJson, "sound" | "group">> {
  id: string;
  app_id: string;
  sound: string | null;
  group: string | null;
  created_at: string;
  updated_at: string;
}

interface AppParams {
  app_id: string;
}
interface ChannelParams extends AppParams {
  channel_id: string;
}

export function androidChannelView(c: AndroidChannel): AndroidChannelJson {
  return {
    id: c.id,
    app_id: c.appId,
    name: c.name,
    description: c.description,
    importance: IMPORTANCE_NAME[c.importance] ?? "default",
    sound: c.sound ?? null,
    vibration: c.vibrationPattern.length > 0 ? c.vibrationPattern : c.vibration,
    lights: c.lightColor ?? c.lights,
    badge: c.badge,
    group: c.group ?? null,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

/** REST settings → the registry's; what the body leaves out stays unset (kept on update). */
export function toChannelSettings(body: ChannelSettingsJson): MessageInitShape<typeof AndroidChannelSettingsSchema> {
  const out: MessageInitShape<typeof AndroidChannelSettingsSchema> = {
    name: body.name,
    description: body.description,
    importance: body.importance === undefined ? ChannelImportance.UNSPECIFIED : IMPORTANCE[body.importance],
    badge: body.badge,
  };
  // null clears: the registry reads "" as "not set" for the sound and the group.
  if (body.sound !== undefined) out.sound = body.sound ?? "";
  if (body.group !== undefined) out.group = body.group ?? "";
  if (body.vibration !== undefined) {
    out.vibration = body.vibration !== false;
    out.vibrationPattern = Array.isArray(body.vibration) ? body.vibration : [];
  }
  if (body.lights !== undefined) {
    out.lights = body.lights !== false;
    if (typeof body.lights === "string") out.lightColor = body.lights;
  }
  return out;
}

const present = (channel: AndroidChannel | undefined, rpc: string): AndroidChannel => {
  if (!channel) throw new Error(`${rpc} answered without a channel`);
  return channel;
};

export function registerAndroidChannelRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { androidChannels, apps } = deps;
  const byApp = appInPath(apps);

  scope.post<{ Params: AppParams; Body: ChannelSettingsJson & { id: string; name: string } }>(
    "/apps/:app_id/android-channels",
    { schema: createAndroidChannelSchema, config: { minRole: "admin", authorize: byApp } },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { id, ...settings } = request.body;
      const { channel } = await androidChannels.createAndroidChannel({
        appId: app.id,
        id,
        settings: toChannelSettings(settings),
      });
      return reply.code(201).send(androidChannelView(present(channel, "CreateAndroidChannel")));
    },
  );

  scope.get<{ Params: AppParams }>(
    "/apps/:app_id/android-channels",
    { schema: listAndroidChannelsSchema, config: { minRole: "viewer", clientKey: "allowed", authorize: byApp } },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { channels } = await androidChannels.listAndroidChannels({ appId: app.id });
      const body = {
        data: channels.map(androidChannelView),
        page: 1,
        per_page: CHANNELS_PER_APP,
        total: channels.length,
      };
      const etag = strongEtag(body);
      reply.header("etag", etag);
      if (noneMatch(request.headers["if-none-match"], etag)) return reply.code(304).send();
      return body;
    },
  );

  scope.get<{ Params: ChannelParams }>(
    "/apps/:app_id/android-channels/:channel_id",
    { schema: getAndroidChannelSchema, config: { minRole: "viewer", clientKey: "allowed", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { channel } = await androidChannels.getAndroidChannel({ appId: app.id, id: request.params.channel_id });
      return androidChannelView(present(channel, "GetAndroidChannel"));
    },
  );

  scope.patch<{ Params: ChannelParams; Body: ChannelSettingsJson }>(
    "/apps/:app_id/android-channels/:channel_id",
    { schema: updateAndroidChannelSchema, config: { minRole: "admin", authorize: byApp } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { channel } = await androidChannels.updateAndroidChannel({
        appId: app.id,
        id: request.params.channel_id,
        settings: toChannelSettings(request.body),
      });
      return androidChannelView(present(channel, "UpdateAndroidChannel"));
    },
  );

  scope.delete<{ Params: ChannelParams }>(
    "/apps/:app_id/android-channels/:channel_id",
    { schema: deleteAndroidChannelSchema, config: { minRole: "admin", authorize: byApp } },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      await androidChannels.deleteAndroidChannel({ appId: app.id, id: request.params.channel_id });
      return reply.code(204).send();
    },
  );
}
