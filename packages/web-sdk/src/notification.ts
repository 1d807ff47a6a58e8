/**
 * The JSON Herald's web push sender delivers (services/sender-webpush/src/webpush-payload.ts)
 * and how the service worker turns it into a notification. Option names are the
 * Notifications API's, so most pass through as they are.
 */
export interface PushPayload {
  campaign_id?: string;
  title: string;
  body: string;
  data?: Record<string, unknown>;
  image?: string;
  icon?: string;
  badge?: string;
  actions?: { action: string; title: string; icon?: string }[];
  badge_count?: number;
  badge_increment?: number;
  content_available?: true;
}

/** What the worker keeps on the notification, to report and open it on click. */
export interface NotificationData {
  campaign_id?: string;
  data: Record<string, unknown>;
}

export interface ShownNotification {
  title: string;
  options: Record<string, unknown> & { data: NotificationData };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The payload, when the text is one of Herald's; undefined otherwise. */
export function parsePayload(text: string): PushPayload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.title !== "string" || typeof value.body !== "string") return undefined;
  return value as unknown as PushPayload;
}

export function notificationOf(p: PushPayload): ShownNotification {
  const options: ShownNotification["options"] = {
    body: p.body,
    data: { campaign_id: p.campaign_id, data: isObject(p.data) ? p.data : {} },
  };
  // Delivery is at least once: a campaign's second push to this browser replaces its
  // first notification (quietly: no renotify) instead of showing beside it.
  if (p.campaign_id) options.tag = `herald:${p.campaign_id}`;
  if (p.image) options.image = p.image;
  if (p.icon) options.icon = p.icon;
  if (p.badge) options.badge = p.badge;
  if (p.actions?.length) options.actions = p.actions;
  // A "silent" send still has to show something in browsers; at least make no noise.
  if (p.content_available) options.silent = true;
  return { title: p.title, options };
}

/**
 * `data.action_url` as an absolute URL when it is http or https: a push must never make
 * the browser open javascript:, data: or other schemes.
 */
export function actionUrl(data: Record<string, unknown> | undefined, base: string): string | undefined {
  const value = data?.action_url;
  if (typeof value !== "string") return undefined;
  try {
    const url = new URL(value, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The badge after this push: set by badge_count, raised by badge_increment; undefined: unchanged. */
export function nextBadge(p: PushPayload, current: number | undefined): number | undefined {
  if (typeof p.badge_count === "number") return p.badge_count;
  if (typeof p.badge_increment === "number") return (current ?? 0) + p.badge_increment;
  return undefined;
}
