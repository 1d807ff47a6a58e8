/** What a page can listen to with `Herald.on(…)`. */
export interface HeraldEvents {
  /** The browser is registered (or registered again) as a device. */
  subscribed: { deviceId: string };
  /** A push arrived and was shown while a page of the site was open. */
  notification: { campaignId?: string; title: string; body: string; data: Record<string, unknown> };
  /** The user clicked a notification (or one of its action buttons: `action`). */
  click: { campaignId?: string; action: string; url?: string; data: Record<string, unknown> };
}

export type HeraldEventName = keyof HeraldEvents;

/** The worker's messages to the pages: `{ herald: <event name>, detail }`. */
export interface WorkerMessage<K extends HeraldEventName = HeraldEventName> {
  herald: K;
  detail: HeraldEvents[K];
}

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  const v = value as Partial<WorkerMessage> | null;
  return typeof v === "object" && v !== null && (v.herald === "notification" || v.herald === "click");
}

/** A minimal typed event emitter: listeners of one event, called in order; a throwing one does not stop the rest. */
export class Emitter {
  private readonly listeners = new Map<HeraldEventName, Set<(detail: never) => void>>();

  on<K extends HeraldEventName>(event: K, listener: (detail: HeraldEvents[K]) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    set.add(listener);
    this.listeners.set(event, set);
    return () => set.delete(listener);
  }

  emit<K extends HeraldEventName>(event: K, detail: HeraldEvents[K]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as (d: HeraldEvents[K]) => void)(detail);
      } catch (err) {
        console.error(`Herald: a "${event}" listener threw`, err);
      }
    }
  }
}
