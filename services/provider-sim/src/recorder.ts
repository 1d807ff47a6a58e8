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
export type NewDeliveryOf<P extends Platform> = Extract<NewDelivery, { platform: P }>;
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

/**
 * Deliveries are kept as the providers hand them over, beside a packed array of their
 * arrival times, and completed (seq, received_at) only when read: an APNs delivery like
 * the benchmark's (two ids, a 64-digit token, a 100-byte payload) took 543 bytes of heap
 * with its count as a completed object (a spread copy with its properties out of line,
 * and a date string), 472 kept this way. Seqs are consecutive, so the record at index i
 * has seq `firstSeq + i`.
 */
export class Recorder {
  private records: NewDelivery[] = [];
  /** Arrival of each record, ms since the epoch (a packed array of doubles). */
  private arrivals: number[] = [];
  /** The seq of records[0]; the next delivery's is firstSeq + records.length. */
  private firstSeq = 1;
  private readonly counts = new Map<Platform, Map<string, number>>();

  constructor(private readonly maxRecords: number) {}

  /** Keeps a delivery; answers it as handed over (its seq and arrival are added when read). */
  record<D extends NewDelivery>(delivery: D): D {
    this.records.push(delivery);
    this.arrivals.push(Date.now());
    // Trim in chunks, not one by one, so trimming stays cheap per delivery.
    if (this.records.length > this.maxRecords) {
      const drop = this.records.length - Math.floor(this.maxRecords * 0.9);
      this.records = this.records.slice(drop);
      this.arrivals = this.arrivals.slice(drop);
      this.firstSeq += drop;
    }
    let byTarget = this.counts.get(delivery.platform);
    if (!byTarget) this.counts.set(delivery.platform, (byTarget = new Map()));
    byTarget.set(delivery.target, (byTarget.get(delivery.target) ?? 0) + 1);
    return delivery;
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
        out.push(complete(d, this.firstSeq + i, this.arrivals[i]!));
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

  /** Forgets every record and count; seqs go on from where they were. */
  clear(): void {
    this.firstSeq += this.records.length;
    this.records = [];
    this.arrivals = [];
    this.counts.clear();
  }

  /** The index of the first record past `after`. */
  private firstAfter(after: number): number {
    return Math.min(this.records.length, Math.max(0, after - this.firstSeq + 1));
  }
}

function complete(delivery: NewDelivery, seq: number, at: number): Delivery {
  return { ...delivery, seq, received_at: new Date(at).toISOString() } as Delivery;
}
