import { createECDH, randomBytes, type ECDH } from "node:crypto";
import type { CryptoKey } from "jose";
import { InputError } from "../errors.js";
import { importApplicationServerKey } from "./vapid.js";
import { uuid } from "../ids.js";

/** What `PushSubscription.toJSON()` gives a page, and what Herald stores as the web push token. */
export interface SubscriptionJson {
  endpoint: string;
  expirationTime: null;
  keys: { p256dh: string; auth: string };
}

/** A subscription as the browser side holds it: the private halves never leave the simulator. */
export interface Subscription {
  id: string;
  endpoint: string;
  /** The app's VAPID public key the subscription was made with (65 bytes). */
  applicationServerKey: Buffer;
  verificationKey: CryptoKey;
  ecdh: ECDH;
  authSecret: Buffer;
  gone: boolean;
}

/** Key pairs take ~75 µs each: yield to the event loop between batches so a 100,000 bulk create does not stall pushes. */
const YIELD_EVERY = 500;

export class SubscriptionStore {
  private readonly subscriptions = new Map<string, Subscription>();
  /** One imported verification key per application server key, shared by its subscriptions. */
  private readonly keys = new Map<string, CryptoKey>();

  constructor(private readonly origin: string) {}

  /** Like `pushManager.subscribe({ applicationServerKey })`, `count` times. */
  async create(applicationServerKey: string, count: number): Promise<{ id: string; subscription: SubscriptionJson }[]> {
    const point = /^[A-Za-z0-9_-]+$/.test(applicationServerKey)
      ? Buffer.from(applicationServerKey, "base64url")
      : Buffer.alloc(0);
    const verificationKey = await this.verificationKey(point);
    const created: { id: string; subscription: SubscriptionJson }[] = [];
    for (let i = 0; i < count; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const id = uuid();
      const sub: Subscription = {
        id,
        endpoint: `${this.origin}/wp/${id}`,
        applicationServerKey: point,
        verificationKey,
        ecdh,
        authSecret: randomBytes(16),
        gone: false,
      };
      this.subscriptions.set(sub.id, sub);
      created.push({ id: sub.id, subscription: toJson(sub) });
    }
    return created;
  }

  get(id: string): Subscription | undefined {
    return this.subscriptions.get(id);
  }

  /** Marks a subscription gone (pushes get 410) or revives it; false if unknown. */
  setGone(id: string, gone: boolean): boolean {
    const sub = this.subscriptions.get(id);
    if (!sub) return false;
    sub.gone = gone;
    return true;
  }

  private async verificationKey(point: Buffer): Promise<CryptoKey> {
    const cacheKey = point.toString("base64url");
    let key = this.keys.get(cacheKey);
    if (!key) {
      try {
        key = await importApplicationServerKey(point);
      } catch {
        throw new InputError("application_server_key must be a base64url uncompressed P-256 public key (65 bytes)");
      }
      this.keys.set(cacheKey, key);
    }
    return key;
  }
}

function toJson(sub: Subscription): SubscriptionJson {
  return {
    endpoint: sub.endpoint,
    expirationTime: null,
    keys: { p256dh: sub.ecdh.getPublicKey().toString("base64url"), auth: sub.authSecret.toString("base64url") },
  };
}
