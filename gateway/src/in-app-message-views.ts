import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  DeviceInAppMessage,
  InAppAudience,
  InAppAudienceSchema,
  InAppMessage,
  InAppMessageSettingsSchema,
  InAppTime,
  InAppTimeSchema,
} from "@herald/proto/in_app_message";
import { fromTimestamp, toTimestamp } from "@herald/runtime";
import { badRequest } from "./http-errors.js";
import { iso } from "./views.js";

/** In-app messages between REST JSON and the registry's messages (proto/herald/v1/in_app_message.proto). */

export type InAppAudienceJson =
  | { kind: "all" }
  | { kind: "segment"; segment_id: string }
  | { kind: "external_ids"; external_ids: string[] };

type ContentsJson = Record<string, { title: string; body: string }>;

/** The body of a create or an update; what it leaves out stays as it is (create: the default). */
export interface InAppSettingsJson {
  name?: string;
  contents?: ContentsJson;
  image_url?: string | null;
  action_url?: string | null;
  audience?: InAppAudienceJson;
  starts_at?: string | null;
  ends_at?: string | null;
  priority?: number;
  max_impressions?: number | null;
}

export interface InAppMessageJson extends Required<InAppSettingsJson> {
  id: string;
  app_id: string;
  stats: { impressions: number; clicks: number; dismissals: number; devices: number };
  created_at: string;
  updated_at: string;
}

export interface DeviceInAppMessageJson {
  id: string;
  language: string;
  title: string;
  body: string;
  image_url: string | null;
  action_url: string | null;
  priority: number;
  ends_at: string | null;
}

type SettingsInit = MessageInitShape<typeof InAppMessageSettingsSchema>;

/** REST settings → the registry's: null clears ("" for URLs, a time without `at`, 0 impressions). */
export function toInAppSettings(body: InAppSettingsJson): SettingsInit {
  const out: SettingsInit = { name: body.name, priority: body.priority };
  if (body.contents !== undefined) out.contents = { entries: body.contents };
  if (body.image_url !== undefined) out.imageUrl = body.image_url ?? "";
  if (body.action_url !== undefined) out.actionUrl = body.action_url ?? "";
  if (body.audience !== undefined) out.audience = toAudience(body.audience);
  if (body.starts_at !== undefined) out.startsAt = toTime(body.starts_at, "starts_at");
  if (body.ends_at !== undefined) out.endsAt = toTime(body.ends_at, "ends_at");
  if (body.max_impressions !== undefined) out.maxImpressions = body.max_impressions ?? 0;
  return out;
}

function toAudience(audience: InAppAudienceJson): MessageInitShape<typeof InAppAudienceSchema> {
  switch (audience.kind) {
    case "all":
      return { target: { case: "all", value: {} } };
    case "segment":
      return { target: { case: "segmentId", value: audience.segment_id } };
    case "external_ids":
      return { target: { case: "externalIds", value: { externalIds: audience.external_ids } } };
  }
}

function toTime(value: string | null, field: string): MessageInitShape<typeof InAppTimeSchema> {
  if (value === null) return {};
  // The date-time format admits a leap second (…:60), which no clock here can represent.
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) {
    throw badRequest(`invalid request body: /${field} is not a representable time`, [
      { field: `/${field}`, message: "is not a representable time" },
    ]);
  }
  return { at: toTimestamp(at) };
}

function audienceView(audience: InAppAudience | undefined): InAppAudienceJson {
  const t = audience?.target;
  switch (t?.case) {
    case "all":
      return { kind: "all" };
    case "segmentId":
      return { kind: "segment", segment_id: t.value };
    case "externalIds":
      return { kind: "external_ids", external_ids: [...t.value.externalIds] };
    default:
      throw new Error("in-app message without an audience from the registry");
  }
}

const orNull = (ts: InAppTime["at"]): string | null => (ts ? fromTimestamp(ts).toISOString() : null);

export function inAppMessageView(m: InAppMessage): InAppMessageJson {
  const contents: ContentsJson = {};
  for (const [lang, c] of Object.entries(m.contents)) contents[lang] = { title: c.title, body: c.body };
  return {
    id: m.id,
    app_id: m.appId,
    name: m.name,
    contents,
    image_url: m.imageUrl ?? null,
    action_url: m.actionUrl ?? null,
    audience: audienceView(m.audience),
    starts_at: orNull(m.startsAt),
    ends_at: orNull(m.endsAt),
    priority: m.priority,
    max_impressions: m.maxImpressions ?? null,
    stats: {
      impressions: Number(m.stats?.impressions ?? 0n),
      clicks: Number(m.stats?.clicks ?? 0n),
      dismissals: Number(m.stats?.dismissals ?? 0n),
      devices: Number(m.stats?.devices ?? 0n),
    },
    created_at: iso(m.createdAt),
    updated_at: iso(m.updatedAt),
  };
}

export function deviceInAppMessageView(m: DeviceInAppMessage): DeviceInAppMessageJson {
  return {
    id: m.id,
    language: m.language,
    title: m.title,
    body: m.body,
    image_url: m.imageUrl ?? null,
    action_url: m.actionUrl ?? null,
    priority: m.priority,
    ends_at: orNull(m.endsAt),
  };
}
