import type { NotificationOptions as NotificationMessage } from "@herald/proto/delivery";
import { failedPrecondition, invalidArgument } from "@herald/runtime";
import type { NotificationOptions, WebAction } from "./campaign.js";

/**
 * Checks of a send's presentation options (docs/providers.md, "Delivery options").
 * Shape problems are INVALID_ARGUMENT (400); combinations that cannot be delivered as
 * asked are FAILED_PRECONDITION (422).
 */
export const NOTIFICATION_LIMITS = {
  /** APNs and FCM have no documented cap; a badge above this is surely a mistake. */
  badge: 99_999,
  threadIdLength: 64,
  urlLength: 2048,
  /** Chrome shows at most two buttons (Notification.maxActions). */
  webActions: 2,
  actionLength: 64,
} as const;

/** A sound file name in the app (e.g. "chime.caf") or "default". */
const SOUND = /^[A-Za-z0-9_.-]{1,64}$/;
/** The Android channel id rule of AndroidChannelService (proto/herald/v1/android_channel.proto). */
export const CHANNEL_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const CONTROL = /\p{Cc}/u;

const charCount = (s: string): number => [...s].length;

function text(value: string, field: string, max: number): string {
  if (value === "" || charCount(value) > max || CONTROL.test(value)) {
    throw invalidArgument(`${field} must be 1 to ${max} characters without control characters`);
  }
  return value;
}

export function httpsUrl(value: string, field: string): string {
  const bad = () =>
    invalidArgument(`${field} must be an https URL of at most ${NOTIFICATION_LIMITS.urlLength} characters`);
  if (value.length > NOTIFICATION_LIMITS.urlLength) throw bad();
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw bad();
  }
  if (parsed.protocol !== "https:" || parsed.hostname === "") throw bad();
  return value;
}

function badge(value: number, field: string, min: number): number {
  if (!Number.isInteger(value) || value < min || value > NOTIFICATION_LIMITS.badge) {
    throw invalidArgument(`${field} must be an integer from ${min} to ${NOTIFICATION_LIMITS.badge}`);
  }
  return value;
}

function webActions(actions: NotificationMessage["webActions"]): WebAction[] {
  if (actions.length > NOTIFICATION_LIMITS.webActions) {
    throw invalidArgument(`actions must hold at most ${NOTIFICATION_LIMITS.webActions} buttons`);
  }
  const ids = new Set<string>();
  return actions.map((a, i) => {
    const action = text(a.action, `actions[${i}].action`, NOTIFICATION_LIMITS.actionLength);
    if (ids.has(action)) throw invalidArgument("actions must have distinct action ids");
    ids.add(action);
    const out: WebAction = { action, title: text(a.title, `actions[${i}].title`, NOTIFICATION_LIMITS.actionLength) };
    if (a.iconUrl !== undefined) out.iconUrl = httpsUrl(a.iconUrl, `actions[${i}].icon`);
    return out;
  });
}

/** The wire options → the stored ones; undefined when the send sets none. */
export function notificationOptions(value: NotificationMessage | undefined): NotificationOptions | undefined {
  if (!value) return undefined;
  const out: NotificationOptions = {};
  if (value.sound !== undefined) {
    if (!SOUND.test(value.sound)) {
      throw invalidArgument('sound must be "default" or a sound file name of 1 to 64 characters A-Z a-z 0-9 _ . -');
    }
    out.sound = value.sound;
  }
  if (value.badge !== undefined && value.badgeIncrement !== undefined) {
    throw invalidArgument("badge and badge_increment are exclusive: set the count or add to it");
  }
  if (value.badge !== undefined) out.badge = badge(value.badge, "badge", 0);
  if (value.badgeIncrement !== undefined) out.badgeIncrement = badge(value.badgeIncrement, "badge_increment", 1);
  if (value.threadId !== undefined)
    out.threadId = text(value.threadId, "thread_id", NOTIFICATION_LIMITS.threadIdLength);
  if (value.contentAvailable) out.contentAvailable = true;
  if (value.mutableContent) out.mutableContent = true;
  if (value.webIconUrl !== undefined) out.webIconUrl = httpsUrl(value.webIconUrl, "icon");
  if (value.webBadgeUrl !== undefined) out.webBadgeUrl = httpsUrl(value.webBadgeUrl, "web_badge");
  if (value.webActions.length > 0) out.webActions = webActions(value.webActions);
  if (value.androidChannelId !== undefined) {
    if (!CHANNEL_ID.test(value.androidChannelId)) {
      throw invalidArgument("android_channel_id must be 1 to 64 characters A-Z a-z 0-9 _ . -");
    }
    out.androidChannelId = value.androidChannelId;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * A silent push (content_available) wakes the app without showing anything: APNs
 * background pushes must carry no alert, sound or badge, and FCM sends it data-only.
 * Options that only make sense for a visible notification are refused with it.
 */
export function requireDeliverable(options: NotificationOptions | undefined, imageUrl: string | undefined): void {
  if (!options?.contentAvailable) return;
  const visible: [keyof NotificationOptions, string][] = [
    ["sound", "sound"],
    ["badge", "badge"],
    ["badgeIncrement", "badge_increment"],
    ["threadId", "thread_id"],
    ["mutableContent", "mutable_content"],
    ["androidChannelId", "android_channel_id"],
  ];
  const clash = visible.find(([key]) => options[key] !== undefined);
  if (clash) {
    throw failedPrecondition(`content_available (a silent push) shows no notification, so it cannot have ${clash[1]}`);
  }
  if (imageUrl !== undefined) {
    throw failedPrecondition("content_available (a silent push) shows no notification, so it cannot have image_url");
  }
}
