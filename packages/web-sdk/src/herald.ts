import { type ApiConfig, HeraldError, request } from "./api.js";
import { Emitter, type HeraldEventName, type HeraldEvents, isWorkerMessage } from "./events.js";
import { InAppMessages } from "./in-app.js";
import { currentTimezone, languageOf } from "./locale.js";
import { type DeviceJson, devicePath, fieldsOf, registerToken } from "./registration.js";
import { type DeviceFields, loadState, type StoredState, saveState } from "./store.js";

export interface HeraldConfig extends ApiConfig {
  /** Where the site serves herald-sw.js (same origin as the page); default "/herald-sw.js". */
  serviceWorkerPath?: string;
  /** The worker's scope; default "/". */
  serviceWorkerScope?: string;
}

/** Registrations older than this are sent again at start (revives a device marked invalid). */
const REFRESH_MS = 7 * 24 * 3600_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const sameTags = (a: string[], b: string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

function base64UrlBytes(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function sameKey(a: ArrayBuffer | null | undefined, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.length) return false;
  const bytes = new Uint8Array(a);
  return bytes.every((v, i) => v === b[i]);
}

/** The worker of a registration once it is active: pushManager.subscribe needs one. */
function activated(reg: ServiceWorkerRegistration): Promise<void> {
  const worker = reg.installing ?? reg.waiting;
  if (reg.active || !worker) return Promise.resolve();
  return new Promise((resolve) => {
    worker.addEventListener("statechange", () => {
      if (worker.state === "activated") resolve();
    });
  });
}

/**
 * Herald in a web page (docs/sdk-protocol.md): subscribes the browser to web push and
 * registers it as a device, keeps the device's fields in sync with what the app sets
 * (desired state, one request at a time, retried with back-off, kept across reloads),
 * and reads in-app messages. `Herald` is the page's instance; make more for more apps.
 */
export class HeraldSdk {
  private config?: HeraldConfig;
  private state?: StoredState;
  private syncing?: Promise<void>;
  private again = false;
  private readonly events = new Emitter();
  readonly inApp = new InAppMessages(() => {
    const s = this.state;
    if (!s?.deviceId || !s.pushToken) throw new HeraldError("subscribe() first", undefined, "NotSubscribed");
    return { config: s.config, deviceId: s.deviceId, pushToken: s.pushToken };
  });

  /** Configures the SDK and restores the device it registered before; resumes pending changes. */
  async init(config: HeraldConfig): Promise<void> {
    if (!config.baseUrl || !UUID.test(config.appId))
      throw new TypeError("Herald.init needs baseUrl and appId (a UUID)");
    if (!config.clientKey.startsWith("hk_pub_")) {
      // A server key in a page hands every visitor the power to send pushes.
      throw new TypeError("Herald.init needs a client key (hk_pub_…), never a server key");
    }
    this.config = config;
    const api: ApiConfig = { baseUrl: config.baseUrl, appId: config.appId, clientKey: config.clientKey };
    const stored = await loadState();
    const same = stored?.config.appId === api.appId && stored.config.baseUrl === api.baseUrl;
    const desired: DeviceFields = same
      ? { ...stored.desired, timezone: currentTimezone() ?? stored.desired.timezone }
      : {
          external_id: null,
          language: languageOf(navigator.language) ?? null,
          timezone: currentTimezone() ?? null,
          tags: [],
          opted_in: true,
        };
    this.state = same ? { ...stored, config: api, desired } : { config: api, desired };
    await saveState(this.state);

    navigator.serviceWorker?.addEventListener("message", (e) => {
      if (isWorkerMessage(e.data)) this.events.emit(e.data.herald, e.data.detail as never);
    });
    addEventListener("online", () => void this.sync().catch(() => undefined));
    const { registeredAt, pushToken } = this.state;
    // Spread the weekly refreshes over a day, so installs do not call in step.
    if (
      pushToken &&
      registeredAt !== undefined &&
      Date.now() - registeredAt > REFRESH_MS + Math.random() * 86_400_000
    ) {
      this.state = await registerToken(this.state, pushToken);
    }
    await this.sync().catch(() => undefined);
  }

  /**
   * Asks for notification permission, registers the service worker, subscribes with the
   * app's VAPID key and registers the browser; answers the device id.
   */
  async subscribe(): Promise<string> {
    const config = this.requireConfig();
    if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
      throw new HeraldError("this browser cannot receive web push", undefined, "Unsupported");
    }
    const permission = await Notification.requestPermission();
    if (permission !== "granted") {
      throw new HeraldError(`notification permission is ${permission}`, undefined, "PermissionDenied");
    }
    const reg = await navigator.serviceWorker.register(config.serviceWorkerPath ?? "/herald-sw.js", {
      scope: config.serviceWorkerScope ?? "/",
    });
    await activated(reg);
    const { vapid_public_key } = await request<{ vapid_public_key: string }>(
      config,
      "GET",
      `/apps/${config.appId}/web-push-config`,
    );
    const key = base64UrlBytes(vapid_public_key);
    let sub = await reg.pushManager.getSubscription();
    if (sub && !sameKey(sub.options.applicationServerKey, key)) {
      await sub.unsubscribe();
      sub = null;
    }
    sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    this.state = await registerToken(this.requireState(), JSON.stringify(sub.toJSON()));
    const deviceId = this.state.deviceId!;
    this.events.emit("subscribed", { deviceId });
    await this.sync();
    return deviceId;
  }

  /** Ends the push subscription and deletes the device; the app's settings are kept for a later subscribe. */
  async unsubscribe(): Promise<void> {
    const config = this.requireConfig();
    const reg = await navigator.serviceWorker?.getRegistration(config.serviceWorkerScope ?? "/");
    await (await reg?.pushManager.getSubscription())?.unsubscribe();
    const { deviceId, pushToken, desired } = this.requireState();
    if (deviceId && pushToken) {
      await request(config, "DELETE", devicePath(deviceId), { pushToken }).catch((err: unknown) => {
        if (!(err instanceof HeraldError && err.status === 404)) throw err;
      });
    }
    this.state = { config: this.requireState().config, desired };
    await saveState(this.state);
  }

  optOut = () => this.change({ opted_in: false });
  optIn = () => this.change({ opted_in: true });
  setExternalId = (externalId: string | null) => this.change({ external_id: externalId });
  setTags = (tags: string[]) => this.change({ tags: [...new Set(tags)] });
  addTag = (tag: string) => this.setTags([...this.requireState().desired.tags, tag]);
  removeTag = (tag: string) => this.setTags(this.requireState().desired.tags.filter((t) => t !== tag));

  /** An ISO 639-1 code or a BCP 47 tag ("pt-BR" is stored as "pt"); null clears it. */
  setLanguage(language: string | null): Promise<void> {
    const code = language === null ? null : languageOf(language);
    if (code === undefined) return Promise.reject(new TypeError(`"${language}" is not an ISO 639-1 language`));
    return this.change({ language: code });
  }

  /** The device id Herald gave this browser; undefined until subscribed. */
  get deviceId(): string | undefined {
    return this.state?.deviceId;
  }

  on<K extends HeraldEventName>(event: K, listener: (detail: HeraldEvents[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** Sends what the app has set since the last confirmed state; resolves once the server has it. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.again = false;
          await this.syncOnce();
        } while (this.again);
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  private async change(fields: Partial<DeviceFields>): Promise<void> {
    const state = this.requireState();
    this.state = { ...state, desired: { ...state.desired, ...fields } };
    await saveState(this.state);
    await this.sync();
  }

  private async syncOnce(retried = false): Promise<void> {
    const state = this.state;
    if (!state?.deviceId || !state.pushToken || !state.confirmed) return;
    const { desired, confirmed, config, deviceId, pushToken } = state;
    const body: Record<string, unknown> = {};
    for (const field of ["external_id", "language", "timezone"] as const) {
      if (desired[field] !== confirmed[field]) body[field] = desired[field];
    }
    if (!sameTags(desired.tags, confirmed.tags)) body.tags = desired.tags;
    try {
      let device: DeviceJson | undefined;
      if (Object.keys(body).length > 0) {
        device = await request<DeviceJson>(config, "PUT", devicePath(deviceId), { body, pushToken });
      }
      if (desired.opted_in !== (device?.opted_in ?? confirmed.opted_in)) {
        const path = devicePath(deviceId, desired.opted_in ? "/opt-in" : "/opt-out");
        device = await request<DeviceJson>(config, "POST", path, { pushToken });
      }
      if (device) {
        this.state = { ...this.requireState(), confirmed: fieldsOf(device) };
        await saveState(this.state);
      }
    } catch (err) {
      // The device is gone, or its token is no longer the one stored: register again
      // (with the full desired state), once.
      const status = err instanceof HeraldError ? err.status : undefined;
      if (retried || (status !== 404 && status !== 403)) throw err;
      this.state = await registerToken(state, pushToken);
      await this.syncOnce(true);
    }
  }

  private requireConfig(): HeraldConfig {
    if (!this.config) throw new HeraldError("call Herald.init() first", undefined, "NotInitialized");
    return this.config;
  }

  private requireState(): StoredState {
    this.requireConfig();
    return this.state!;
  }
}
