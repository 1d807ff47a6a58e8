import type { Platform } from "./platform.js";

/**
 * Every accepted delivery: which target (subscription, device token, registration
 * token) got which decrypted payload. Tests assert exactly-once delivery and rendered
 * content against it. Counts are exact forever; the records themselves are capped
 * (oldest dropped first) so a long benchmark cannot exhaust memory.
 */
interface DeliveryBase {
  id: string;
  /** Position in arrival order; `after` in queries pages by it. */
  seq: number;
  platform: Platform;
  /** The key deliveries are counted by. */
  target: string;
  received_at: string;
}

export interface WebPushDelivery extends DeliveryBase {
  platform: "webpush";
  subscription_id: string;
  endpoint: string;
  /** The decrypted payload as UTF-8 text. */
  payload: string;
  headers: { ttl: number; urgency: string | null; topic: string | null };
}

export interface ApnsDelivery extends DeliveryBase {
  platform: "apns";
  /** The device token (64 lowercase hex digits); also `target`. */
  device_token: string;
  /** The `apns-id` answered: the request's, or one the simulator generated. */
  apns_id: string;
  topic: string;
  /** `apns-push-type` as sent; null when the header was absent. */
  push_type: string | null;
  /** `apns-priority` in effect: 10 when the header was absent, as APNs defaults. */
  priority: number;
  /** `apns-expiration` (UNIX seconds); null when absent. */
  expiration: number | null;
  collapse_id: string | null;
  /** The request body, the JSON text as sent. */
  payload: string;
}

export interface FcmDelivery extends DeliveryBase {
  platform: "fcm";
  project: string;
  /** `projects/<project>/messages/<id>`, as answered. */
  name: string;
  /** The `message` object as sent (snake_case or camelCase, as the sender wrote it). */
  message: Record<string, unknown>;
  /** The same message as JSON text, so every platform's delivery has a `payload`. */
  payload: string;
}

export type Delivery = WebPushDelivery | ApnsDelivery | FcmDelivery;
export type DeliveryOf<P extends Platform> = Extract<Delivery, { platform: P }>;
/** What a provider hands the recorder; `Omit` distributed over the union so each member keeps its fields. */
export type NewDelivery = WithoutArrival<Delivery>;
type WithoutArrival<T> = T extends unknown ? Omit<T, "seq" | "received_at"> : never;

export interface DeliveryQuery {
  platform?: Platform;
  target?: string;
  /** Only deliveries with a larger `seq`. */
  after?: number;
  limit: number;
}

export interface DeliveryCount {
  total: number;
  by_target: Record<string, number>;
}

export class Recorder {
  private records: Delivery[] = [];
  private seq = 0;
  private readonly counts = new Map<Platform, Map<string, number>>();

  constructor(private readonly maxRecords: number) {}

  record(delivery: NewDelivery): Delivery {
    const full = { ...delivery, seq: ++this.seq, received_at: new Date().toISOString() } as Delivery;
    this.records.push(full);
    // Trim in chunks, not one by one, so trimming stays cheap per delivery.
    if (this.records.length > this.maxRecords) {
      this.records = this.records.slice(this.records.length - Math.floor(this.maxRecords * 0.9));
    }
    let byTarget = this.counts.get(full.platform);
    if (!byTarget) this.counts.set(full.platform, (byTarget = new Map()));
    byTarget.set(full.target, (byTarget.get(full.target) ?? 0) + 1);
    return full;
  }

  /** Oldest first; pages forward with `after` = the last `seq` seen. */
  query(q: DeliveryQuery): Delivery[] {
    const out: Delivery[] = [];
    for (let i = this.firstAfter(q.after ?? 0); i < this.records.length && out.length < q.limit; i++) {
      const d = this.records[i]!;
      if (
        (q.platform === undefined || d.platform === q.platform) &&
        (q.target === undefined || d.target === q.target)
      ) {
        out.push(d);
      }
    }
    return out;
  }

  count(platform?: Platform): DeliveryCount {
    const byTarget: Record<string, number> = {};
    let total = 0;
    for (const [p, targets] of this.counts) {
      if (platform !== undefined && p !== platform) continue;
      for (const [target, n] of targets) {
        byTarget[target] = (byTarget[target] ?? 0) + n;
        total += n;
      }
    }
    return { total, by_target: byTarget };
  }

  clear(): void {
    this.records = [];
    this.counts.clear();
  }

  /** Records are sorted by seq: binary search for the first one past `after`. */
  private firstAfter(after: number): number {
    let lo = 0;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.records[mid]!.seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
