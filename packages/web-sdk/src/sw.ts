/// <reference lib="webworker" />
import { request } from "./api.js";
import type { HeraldEvents, WorkerMessage } from "./events.js";
import { actionUrl, nextBadge, type NotificationData, notificationOf, parsePayload } from "./notification.js";
import { devicePath, registerToken } from "./registration.js";
import { loadState, saveState, type StoredState } from "./store.js";

/**
 * herald-sw.js, the service worker a site serves from its own origin: shows Herald's
 * pushes, reports them received and clicked (the campaign's `received` / `clicked`
 * counters), opens `data.action_url` on click, and registers a replacement subscription
 * when the browser changes it. It reads the page's configuration from IndexedDB.
 */
declare const self: ServiceWorkerGlobalScope;

/** A worker event may live only so long: fewer retries than the page makes. */
const MAX_ATTEMPTS = 3;

self.addEventListener("install", () => void self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("push", (event) => event.waitUntil(onPush(event.data?.text() ?? "")));
self.addEventListener("notificationclick", (event) => {
  const done = onClick(event.notification, event.action);
  event.waitUntil(done);
});
self.addEventListener("pushsubscriptionchange", (event) => {
  const change = event as Event & {
    oldSubscription?: PushSubscription | null;
    newSubscription?: PushSubscription | null;
  };
  (event as ExtendableEvent).waitUntil(onSubscriptionChange(change.oldSubscription, change.newSubscription));
});

async function onPush(text: string): Promise<void> {
  const payload = parsePayload(text);
  // Browsers require a visible notification for every push; a foreign one shows as text.
  if (!payload) return self.registration.showNotification(text.slice(0, 120) || "New notification");
  const { title, options } = notificationOf(payload);
  await self.registration.showNotification(title, options as NotificationOptions);
  const state = await loadState();
  const badge = nextBadge(payload, state?.badgeCount);
  if (badge !== undefined && state) {
    await saveState({ ...state, badgeCount: badge });
    // The Badging API, where the browser has it.
    await (navigator as WorkerNavigator & { setAppBadge?: (n: number) => Promise<void> }).setAppBadge?.(badge);
  }
  await post("notification", {
    campaignId: payload.campaign_id,
    title,
    body: payload.body,
    data: options.data.data,
  });
  if (payload.campaign_id) await report(state, payload.campaign_id, "received");
}

async function onClick(notification: Notification, action: string): Promise<void> {
  notification.close();
  const { campaign_id, data } = (notification.data ?? { data: {} }) as NotificationData;
  const url = actionUrl(data, self.registration.scope);
  await post("click", { campaignId: campaign_id, action, url, data });
  await Promise.all([
    open(url ?? self.registration.scope),
    campaign_id && report(await loadState(), campaign_id, "clicked"),
  ]);
}

/**
 * The page to show after a click: a window already at that URL is focused; otherwise a
 * window of the site is navigated there (when the URL is on the site's origin), or a new
 * one opened.
 */
async function open(url: string): Promise<void> {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const exact = windows.find((w) => w.url === url);
  if (exact) {
    await exact.focus();
    return;
  }
  const sameOrigin = new URL(url).origin === self.location.origin;
  const target = sameOrigin ? (windows.find((w) => w.focused) ?? windows[0]) : undefined;
  if (target) {
    const navigated = await target.navigate(url).catch(() => null);
    if (navigated) {
      await navigated.focus().catch(() => undefined);
      return;
    }
  }
  await self.clients.openWindow(url);
}

async function report(state: StoredState | undefined, campaignId: string, type: "received" | "clicked") {
  if (!state?.deviceId || !state.pushToken) return;
  await request(state.config, "POST", devicePath(state.deviceId, "/notification-events"), {
    body: { campaign_id: campaignId, type },
    pushToken: state.pushToken,
    maxAttempts: MAX_ATTEMPTS,
  }).catch((err: unknown) => console.warn("Herald: could not report the notification", err));
}

async function post<K extends keyof HeraldEvents>(event: K, detail: HeraldEvents[K]): Promise<void> {
  const message: WorkerMessage<K> = { herald: event, detail };
  for (const client of await self.clients.matchAll({ type: "window" })) client.postMessage(message);
}

async function onSubscriptionChange(
  old: PushSubscription | null | undefined,
  replacement: PushSubscription | null | undefined,
): Promise<void> {
  const state = await loadState();
  if (!state?.deviceId) return;
  let sub = replacement ?? null;
  if (!sub) {
    const key = old?.options.applicationServerKey ?? (await vapidKey(state));
    sub = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  await registerToken(state, JSON.stringify(sub.toJSON()), MAX_ATTEMPTS);
}

async function vapidKey(state: StoredState): Promise<string> {
  const config = await request<{ vapid_public_key: string }>(
    state.config,
    "GET",
    `/apps/${state.config.appId}/web-push-config`,
    { maxAttempts: MAX_ATTEMPTS },
  );
  return config.vapid_public_key;
}
