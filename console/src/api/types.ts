/** The REST API's resources as the console uses them (gateway/src/schemas/*.ts). */
export type Role = "owner" | "admin" | "developer" | "viewer";
export type Platform = "ios" | "android" | "web";

export interface Page<T> {
  data: T[];
  page: number;
  per_page: number;
  total: number;
}

export interface Me {
  user: { id: string; email: string; name: string | null };
  org: { id: string; name: string };
  role: Role;
  memberships: { org_id: string; org_name: string; role: Role }[];
}

export interface App {
  id: string;
  org_id: string;
  name: string;
  platform: Platform;
  bundle_id: string;
  created_at: string;
  updated_at: string;
}

export interface IosConfig {
  platform: "ios";
  apns_key_id: string;
  apns_team_id: string;
  apns_topic: string | null;
  apns_environment: "production" | "sandbox";
  fingerprint: string;
  updated_at: string;
}
export interface AndroidConfig {
  platform: "android";
  project_id: string;
  client_email: string;
  token_uri: string;
  fingerprint: string;
  updated_at: string;
}
export interface WebConfig {
  platform: "web";
  vapid_public_key: string;
  vapid_subject: string;
  fingerprint: string;
  updated_at: string;
}
export interface PlatformConfigs {
  app_id: string;
  ios: IosConfig | null;
  android: AndroidConfig | null;
  web: WebConfig | null;
}

export interface ApiKey {
  id: string;
  name: string;
  /** server: for backends; client: publishable, embedded in apps (registers devices only). */
  kind: "server" | "client";
  scope: "app" | "org";
  app_id: string;
  prefix: string;
  rate_limit_per_minute: number;
  created_at: string;
}
export interface CreatedApiKey extends ApiKey {
  secret: string;
}

export interface Device {
  id: string;
  app_id: string;
  push_token: string;
  platform: Platform;
  external_id: string | null;
  language: string | null;
  timezone: string | null;
  app_version: string | null;
  tags: string[];
  opted_in: boolean;
  invalid: boolean;
  created_at: string;
  updated_at: string;
}

export interface SegmentRule {
  tags_any?: string[];
  tags_all?: string[];
  tags_none?: string[];
  platforms?: Platform[];
  languages?: string[];
  app_versions?: string[];
  timezones?: string[];
  has_external_id?: boolean;
}
export interface Segment {
  id: string;
  app_id: string;
  name: string;
  rule: SegmentRule;
  preview_count: number | null;
  created_at: string;
  updated_at: string;
}

/** Android's NotificationManager importance levels, as the API names them. */
export type ChannelImportance = "min" | "low" | "default" | "high" | "max";
/** What POST and PATCH /v1/apps/{app_id}/android-channels take besides the id. */
export interface AndroidChannelSettings {
  name: string;
  description: string;
  importance: ChannelImportance;
  /** A res/raw sound of the app or "default"; null: the system default. */
  sound: string | null;
  /** On or off, or a pattern in milliseconds (off, on, off, …), which means on. */
  vibration: boolean | number[];
  /** On or off, or the color as #RRGGBB, which means on. */
  lights: boolean | string;
  badge: boolean;
  group: string | null;
}
export interface AndroidChannel extends AndroidChannelSettings {
  id: string;
  app_id: string;
  created_at: string;
  updated_at: string;
}

export type CampaignStatus = "scheduled" | "queued" | "sending" | "completed" | "cancelled" | "failed";
export interface CampaignStats {
  campaign_id: string;
  sent: number;
  delivered: number;
  failed: number;
  bounced: number;
  throttled: number;
  /** Devices whose client library reported the notification shown / clicked. */
  received: number;
  clicked: number;
}
export interface Campaign {
  id: string;
  app_id: string;
  name: string;
  status: CampaignStatus;
  audience_size: number;
  sent_at: string | null;
  scheduled_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  contents: Record<string, { title: string | null; body: string | null }>;
  data: Record<string, unknown> | null;
  target:
    | { type: "all" }
    | { type: "users"; external_ids_count: number }
    | { type: "segment"; segment_id: string }
    | { type: "devices"; device_ids: string[] };
  ttl: number;
  priority: "normal" | "high";
  collapse_id: string | null;
  image_url: string | null;
  failure_reason: string | null;
  stats: CampaignStats;
  /** Set only when the send named a channel. */
  android_channel_id?: string;
}

export interface Member {
  user: { id: string; email: string; name: string | null };
  role: Role;
  joined_at: string;
}
export interface Invitation {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
  created_at: string;
}
export interface CreatedInvitation extends Invitation {
  token: string;
  accept_url: string;
}
