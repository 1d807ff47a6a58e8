/**
 * The FCM HTTP v1 `messages:send` request as its proto schema defines it, field names
 * in snake_case (the camelCase JSON names are derived). Anything not listed here is an
 * unknown field, refused as Google's JSON parser refuses it.
 */
export type Kind =
  | "string"
  | "bool"
  | "int32"
  | "float"
  | "duration"
  | "timestamp"
  | "stringMap"
  | "struct"
  | "stringList"
  | "durationList";

export type Spec = Kind | { enum: string; values: readonly string[] } | { message: string; fields: Schema };
export interface Schema {
  readonly [snakeName: string]: Spec;
}

const FCM = "google.firebase.fcm.v1";
const message = (name: string, fields: Schema): Spec => ({ message: `${FCM}.${name}`, fields });
const enumOf = (name: string, values: readonly string[]): Spec => ({ enum: `${FCM}.${name}`, values });

const NOTIFICATION = message("Notification", { title: "string", body: "string", image: "string" });
const FCM_OPTIONS = message("FcmOptions", { analytics_label: "string" });

const ANDROID_NOTIFICATION = message("AndroidNotification", {
  title: "string",
  body: "string",
  icon: "string",
  color: "string",
  sound: "string",
  tag: "string",
  click_action: "string",
  body_loc_key: "string",
  body_loc_args: "stringList",
  title_loc_key: "string",
  title_loc_args: "stringList",
  channel_id: "string",
  ticker: "string",
  sticky: "bool",
  event_time: "timestamp",
  local_only: "bool",
  notification_priority: enumOf("AndroidNotification.NotificationPriority", [
    "PRIORITY_UNSPECIFIED",
    "PRIORITY_MIN",
    "PRIORITY_LOW",
    "PRIORITY_DEFAULT",
    "PRIORITY_HIGH",
    "PRIORITY_MAX",
  ]),
  default_sound: "bool",
  default_vibrate_timings: "bool",
  default_light_settings: "bool",
  vibrate_timings: "durationList",
  visibility: enumOf("AndroidNotification.Visibility", ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]),
  notification_count: "int32",
  light_settings: message("LightSettings", {
    color: { message: "google.type.Color", fields: { red: "float", green: "float", blue: "float", alpha: "float" } },
    light_on_duration: "duration",
    light_off_duration: "duration",
  }),
  image: "string",
  bypass_proxy_notification: "bool",
  proxy: enumOf("AndroidNotification.Proxy", ["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"]),
});

const ANDROID = message("AndroidConfig", {
  collapse_key: "string",
  priority: enumOf("AndroidMessagePriority", ["NORMAL", "HIGH"]),
  ttl: "duration",
  restricted_package_name: "string",
  data: "stringMap",
  notification: ANDROID_NOTIFICATION,
  fcm_options: message("AndroidFcmOptions", { analytics_label: "string" }),
  direct_boot_ok: "bool",
  bandwidth_constrained_ok: "bool",
  restricted_satellite_ok: "bool",
});

const WEBPUSH = message("WebpushConfig", {
  headers: "stringMap",
  data: "stringMap",
  notification: "struct",
  fcm_options: message("WebpushFcmOptions", { link: "string", analytics_label: "string" }),
});

const APNS = message("ApnsConfig", {
  headers: "stringMap",
  payload: "struct",
  fcm_options: message("ApnsFcmOptions", { analytics_label: "string", image: "string" }),
  live_activity_token: "string",
});

export const MESSAGE = message("Message", {
  name: "string",
  data: "stringMap",
  notification: NOTIFICATION,
  android: ANDROID,
  webpush: WEBPUSH,
  apns: APNS,
  fcm_options: FCM_OPTIONS,
  token: "string",
  topic: "string",
  condition: "string",
});

export const SEND_REQUEST = message("SendMessageRequest", { message: MESSAGE, validate_only: "bool" });

/** The oneof `target` of Message. */
export const TARGET_FIELDS = ["token", "topic", "condition"] as const;

/** proto3 JSON: lowerCamelCase of the field name. */
export function jsonName(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
