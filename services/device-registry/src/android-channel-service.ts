import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type AndroidChannelSchema,
  type AndroidChannelService,
  type AndroidChannelSettings,
  ChannelImportance,
  type CreateAndroidChannelRequest,
  type DeleteAndroidChannelRequest,
  type GetAndroidChannelRequest,
  type ListAndroidChannelsRequest,
  type UpdateAndroidChannelRequest,
} from "@herald/proto/android_channel";
import type { ServiceImpl } from "@connectrpc/connect";
import { alreadyExists, failedPrecondition, invalidArgument, notFound, toTimestamp } from "@herald/runtime";
import type { AndroidChannelStore, ChannelFields, ChannelRow, Importance } from "./android-channel-store.js";
import { requireAppId } from "./ids.js";

export const CHANNEL_LIMITS = {
  /** Channels per app: a settings screen of more would help no user. */
  perApp: 100,
  nameLength: 255,
  descriptionLength: 1000,
  vibrationSteps: 64,
  vibrationStepMs: 60_000,
} as const;

/** Channel and channel group ids (the REST API documents the same rule). */
const ID = /^[A-Za-z0-9_.-]{1,64}$/;
/** A sound resource name or "default"; "" resets to the system default. */
const SOUND = /^[A-Za-z0-9_.-]{0,64}$/;
const COLOR = /^#[0-9A-Fa-f]{6}$/;
const CONTROL = /\p{Cc}/u;

const IMPORTANCE: Record<ChannelImportance, Importance | undefined> = {
  [ChannelImportance.UNSPECIFIED]: undefined,
  [ChannelImportance.MIN]: "min",
  [ChannelImportance.LOW]: "low",
  [ChannelImportance.DEFAULT]: "default",
  [ChannelImportance.HIGH]: "high",
  [ChannelImportance.MAX]: "max",
};
const IMPORTANCE_ENUM = Object.fromEntries(
  Object.entries(IMPORTANCE).map(([k, v]) => [v, Number(k) as ChannelImportance]),
) as Record<Importance, ChannelImportance>;

function channelId(id: string): string {
  if (!ID.test(id)) throw invalidArgument("channel id must be 1 to 64 characters A-Z a-z 0-9 _ . -");
  return id;
}

function text(value: string, field: string, min: number, max: number): string {
  const n = [...value].length;
  if (n < min || n > max || CONTROL.test(value)) {
    throw invalidArgument(`${field} must be ${min} to ${max} characters without control characters`);
  }
  return value;
}

/** The settings of a create or update → columns; unset settings are left out. */
function fields(s: AndroidChannelSettings | undefined): ChannelFields {
  const out: ChannelFields = {};
  if (!s) return out;
  if (s.name !== undefined) out.name = text(s.name, "name", 1, CHANNEL_LIMITS.nameLength);
  if (s.description !== undefined) {
    out.description = text(s.description, "description", 0, CHANNEL_LIMITS.descriptionLength);
  }
  if (!(s.importance in IMPORTANCE)) throw invalidArgument("importance must be min, low, default, high or max");
  const importance = IMPORTANCE[s.importance];
  if (importance) out.importance = importance;
  if (s.sound !== undefined) {
    if (!SOUND.test(s.sound)) throw invalidArgument("sound must be a sound resource name of at most 64 characters");
    out.sound = s.sound === "" ? null : s.sound;
  }
  if (s.vibration !== undefined) {
    const steps = s.vibrationPattern;
    if (steps.length > CHANNEL_LIMITS.vibrationSteps || steps.some((ms) => ms > CHANNEL_LIMITS.vibrationStepMs)) {
      throw invalidArgument(
        `vibration pattern must hold at most ${CHANNEL_LIMITS.vibrationSteps} steps of at most ${CHANNEL_LIMITS.vibrationStepMs} ms`,
      );
    }
    out.vibration = s.vibration || steps.length > 0;
    out.vibration_pattern = steps;
  }
  if (s.lights !== undefined) {
    if (s.lightColor !== undefined && !COLOR.test(s.lightColor)) {
      throw invalidArgument("lights color must be #RRGGBB");
    }
    out.lights = s.lights || s.lightColor !== undefined;
    out.light_color = s.lightColor ?? null;
  }
  if (s.badge !== undefined) out.badge = s.badge;
  if (s.group !== undefined) {
    if (s.group !== "" && !ID.test(s.group))
      throw invalidArgument("group must be 1 to 64 characters A-Z a-z 0-9 _ . -");
    out.group_id = s.group === "" ? null : s.group;
  }
  return out;
}

export function toChannel(row: ChannelRow): MessageInitShape<typeof AndroidChannelSchema> {
  return {
    appId: row.app_id,
    id: row.id,
    name: row.name,
    description: row.description,
    importance: IMPORTANCE_ENUM[row.importance],
    sound: row.sound ?? undefined,
    vibration: row.vibration,
    vibrationPattern: row.vibration_pattern,
    lights: row.lights,
    lightColor: row.light_color ?? undefined,
    badge: row.badge,
    group: row.group_id ?? undefined,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  };
}

/** Android notification channels per app; the store is injected so tests can swap it. */
export class AndroidChannelServiceImpl implements ServiceImpl<typeof AndroidChannelService> {
  constructor(private readonly store: AndroidChannelStore) {}

  async createAndroidChannel(req: CreateAndroidChannelRequest) {
    const appId = requireAppId(req.appId);
    const id = channelId(req.id);
    const { name, ...rest } = fields(req.settings);
    if (name === undefined) throw invalidArgument("name is required");
    const result = await this.store.create(appId, id, { ...rest, name }, CHANNEL_LIMITS.perApp);
    if (result.ok) return { channel: toChannel(result.channel) };
    if (result.reason === "exists") throw alreadyExists(`the app already has a channel "${id}"`);
    throw failedPrecondition(`an app has at most ${CHANNEL_LIMITS.perApp} Android channels`);
  }

  async getAndroidChannel(req: GetAndroidChannelRequest) {
    return { channel: toChannel(await this.find(req.appId, req.id)) };
  }

  async listAndroidChannels(req: ListAndroidChannelsRequest) {
    const rows = await this.store.list(requireAppId(req.appId));
    return { channels: rows.map(toChannel) };
  }

  async updateAndroidChannel(req: UpdateAndroidChannelRequest) {
    const appId = requireAppId(req.appId);
    const changes = fields(req.settings);
    if (Object.keys(changes).length === 0) return { channel: toChannel(await this.find(appId, req.id)) };
    const row = ID.test(req.id) ? await this.store.update(appId, req.id, changes) : undefined;
    if (!row) throw notFound("android channel not found");
    return { channel: toChannel(row) };
  }

  async deleteAndroidChannel(req: DeleteAndroidChannelRequest) {
    const appId = requireAppId(req.appId);
    if (!ID.test(req.id) || !(await this.store.delete(appId, req.id))) throw notFound("android channel not found");
    return {};
  }

  private async find(appId: string, id: string): Promise<ChannelRow> {
    const row = ID.test(id) ? await this.store.get(requireAppId(appId), id) : undefined;
    if (!row) throw notFound("android channel not found");
    return row;
  }
}
