import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  CampaignStatus,
  Priority,
  type Campaign,
  type CampaignStats,
  type CampaignTarget,
} from "@herald/proto/campaign";
import type { Segment, SegmentRule } from "@herald/proto/device";
import type { NotificationOptions } from "@herald/proto/delivery";
import { iso, platformName, type PlatformName } from "./views.js";

/**
 * Campaigns, their stats and segments as JSON, in the conventions of views.ts:
 * snake_case, ISO 8601 UTC timestamps, enums as words, absent values as null and
 * uint64 counters as plain numbers (they stay far below 2^53).
 */

export type CampaignStatusName = "scheduled" | "queued" | "sending" | "completed" | "cancelled" | "failed";
export type PriorityName = "normal" | "high";

const STATUS_NAMES: Partial<Record<CampaignStatus, CampaignStatusName>> = {
  [CampaignStatus.SCHEDULED]: "scheduled",
  [CampaignStatus.QUEUED]: "queued",
  [CampaignStatus.SENDING]: "sending",
  [CampaignStatus.COMPLETED]: "completed",
  [CampaignStatus.CANCELLED]: "cancelled",
  [CampaignStatus.FAILED]: "failed",
};

export function campaignStatusName(s: CampaignStatus): CampaignStatusName {
  const name = STATUS_NAMES[s];
  if (!name) throw new Error(`unexpected campaign status ${s}`);
  return name;
}

const STATUS_BY_NAME = Object.fromEntries(
  Object.entries(STATUS_NAMES).map(([status, name]) => [name, Number(status)]),
) as Record<CampaignStatusName, CampaignStatus>;

export const campaignStatusFromName = (name: CampaignStatusName): CampaignStatus => STATUS_BY_NAME[name];

/** The service stores "normal" for an unspecified priority; show it that way. */
export const priorityName = (p: Priority): PriorityName => (p === Priority.HIGH ? "high" : "normal");
export const priorityFromName = (name: PriorityName): Priority => (name === "high" ? Priority.HIGH : Priority.NORMAL);

const isoOrNull = (ts: Timestamp | undefined): string | null => (ts ? iso(ts) : null);
const textOrNull = (s: string | undefined): string | null => (s === undefined || s === "" ? null : s);

export interface CampaignStatsJson {
  campaign_id: string;
  sent: number;
  delivered: number;
  failed: number;
  bounced: number;
  throttled: number;
  received: number;
  clicked: number;
}

export function campaignStatsView(campaignId: string, stats: CampaignStats | undefined): CampaignStatsJson {
  return {
    campaign_id: campaignId,
    sent: Number(stats?.sent ?? 0n),
    delivered: Number(stats?.delivered ?? 0n),
    failed: Number(stats?.failed ?? 0n),
    bounced: Number(stats?.bounced ?? 0n),
    throttled: Number(stats?.throttled ?? 0n),
    received: Number(stats?.received ?? 0n),
    clicked: Number(stats?.clicked ?? 0n),
  };
}

export type TargetJson =
  | { type: "all" }
  | { type: "users"; external_ids_count: number }
  | { type: "segment"; segment_id: string }
  | { type: "devices"; device_ids: string[] };

export function targetView(target: CampaignTarget | undefined): TargetJson {
  const t = target?.target;
  switch (t?.case) {
    case "all":
      return { type: "all" };
    case "externalIds":
      return { type: "users", external_ids_count: t.value.externalIds.length };
    case "segment":
      return { type: "segment", segment_id: t.value.segmentId };
    case "deviceIds":
      return { type: "devices", device_ids: t.value.deviceIds };
    default:
      throw new Error("campaign without a target");
  }
}

/** POST /v1/push/* presentation options, as sent. */
export interface DeliveryOptionsJson {
  sound?: string;
  badge?: number;
  badge_increment?: number;
  thread_id?: string;
  content_available?: true;
  mutable_content?: true;
  icon?: string;
  web_badge?: string;
  actions?: { action: string; title: string; icon?: string }[];
  android_channel_id?: string;
}

export interface CampaignJson extends DeliveryOptionsJson {
  id: string;
  app_id: string;
  name: string;
  status: CampaignStatusName;
  audience_size: number;
  sent_at: string | null;
  scheduled_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  contents: Record<string, { title: string | null; body: string | null }>;
  data: Record<string, unknown> | null;
  target: TargetJson;
  ttl: number;
  priority: PriorityName;
  collapse_id: string | null;
  image_url: string | null;
  failure_reason: string | null;
  stats: CampaignStatsJson;
}

/** The send's presentation options under their request names, only those it set. */
export function deliveryOptionsView(n: NotificationOptions | undefined): DeliveryOptionsJson {
  if (!n) return {};
  const out: DeliveryOptionsJson = {};
  if (n.sound !== undefined) out.sound = n.sound;
  if (n.badge !== undefined) out.badge = n.badge;
  if (n.badgeIncrement !== undefined) out.badge_increment = n.badgeIncrement;
  if (n.threadId !== undefined) out.thread_id = n.threadId;
  if (n.contentAvailable) out.content_available = true;
  if (n.mutableContent) out.mutable_content = true;
  if (n.webIconUrl !== undefined) out.icon = n.webIconUrl;
  if (n.webBadgeUrl !== undefined) out.web_badge = n.webBadgeUrl;
  if (n.webActions.length > 0) {
    out.actions = n.webActions.map((a) => ({
      action: a.action,
      title: a.title,
      ...(a.iconUrl !== undefined ? { icon: a.iconUrl } : {}),
    }));
  }
  if (n.androidChannelId !== undefined) out.android_channel_id = n.androidChannelId;
  return out;
}

export function campaignView(c: Campaign): CampaignJson {
  const contents: CampaignJson["contents"] = {};
  for (const [lang, content] of Object.entries(c.contents)) {
    contents[lang] = { title: textOrNull(content.title), body: textOrNull(content.body) };
  }
  return {
    id: c.id,
    app_id: c.appId,
    name: c.name,
    status: campaignStatusName(c.status),
    audience_size: Number(c.audienceSize),
    sent_at: isoOrNull(c.sentAt),
    scheduled_at: isoOrNull(c.scheduledAt),
    completed_at: isoOrNull(c.completedAt),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    contents,
    data: c.dataJson === "" ? null : (JSON.parse(c.dataJson) as Record<string, unknown>),
    target: targetView(c.target),
    ttl: c.options?.ttlSeconds ?? 0,
    priority: priorityName(c.options?.priority ?? Priority.UNSPECIFIED),
    collapse_id: textOrNull(c.options?.collapseId),
    image_url: textOrNull(c.options?.imageUrl),
    ...deliveryOptionsView(c.options?.notification),
    failure_reason: textOrNull(c.failureReason),
    stats: campaignStatsView(c.id, c.stats),
  };
}

export interface SegmentRuleJson {
  tags_any?: string[];
  tags_all?: string[];
  tags_none?: string[];
  platforms?: PlatformName[];
  languages?: string[];
  app_versions?: string[];
  timezones?: string[];
  has_external_id?: boolean;
}

/** Only the parts that are set, so a rule read back is a valid rule to send again. */
export function segmentRuleView(rule: SegmentRule | undefined): SegmentRuleJson {
  const out: SegmentRuleJson = {};
  if (!rule) return out;
  const lists = {
    tags_any: rule.tagsAny,
    tags_all: rule.tagsAll,
    tags_none: rule.tagsNone,
    languages: rule.languages,
    app_versions: rule.appVersions,
    timezones: rule.timezones,
  } as const;
  for (const [key, list] of Object.entries(lists) as [keyof typeof lists, string[]][]) {
    if (list.length > 0) out[key] = [...list];
  }
  if (rule.platforms.length > 0) out.platforms = rule.platforms.map(platformName);
  if (rule.hasExternalId !== undefined) out.has_external_id = rule.hasExternalId;
  return out;
}

export interface SegmentJson {
  id: string;
  app_id: string;
  name: string;
  rule: SegmentRuleJson;
  preview_count: number | null;
  created_at: string;
  updated_at: string;
}

export function segmentView(s: Segment): SegmentJson {
  return {
    id: s.id,
    app_id: s.appId,
    name: s.name,
    rule: segmentRuleView(s.rule),
    preview_count: s.previewCount === undefined ? null : Number(s.previewCount),
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
  };
}
