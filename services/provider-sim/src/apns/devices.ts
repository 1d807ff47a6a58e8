import { randomBytes } from "node:crypto";

/** What the simulated device side answers for a token. */
export type DeviceState = "active" | "unregistered" | "expired" | "bad";

export interface ApnsDevice {
  /** The topic the token was issued for; null for a token marked without being issued here (any topic). */
  topic: string | null;
  state: DeviceState;
  /** When the token stopped being valid (ms since the epoch): the 410's `timestamp`. */
  since: number | null;
}

/** 32 bytes, written as 64 hex digits: the device tokens Apple issues. */
export const DEVICE_TOKEN = /^[0-9a-fA-F]{64}$/;

/** Device tokens the simulator issued or was told about, by lowercase token. */
export class ApnsDeviceStore {
  private readonly devices = new Map<string, ApnsDevice>();

  /** Like `registerForRemoteNotifications()` on `count` devices with the app of `topic`. */
  create(topic: string, count: number): string[] {
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const token = randomBytes(32).toString("hex");
      this.devices.set(token, { topic, state: "active", since: null });
      tokens.push(token);
    }
    return tokens;
  }

  get(token: string): ApnsDevice | undefined {
    return this.devices.get(token.toLowerCase());
  }

  /**
   * Sets a token's state; a well-formed token never issued here is remembered for any
   * topic, so a test can kill tokens it made up itself.
   */
  mark(token: string, state: DeviceState, since: number | null): ApnsDevice {
    const key = token.toLowerCase();
    const device = this.devices.get(key) ?? { topic: null, state: "active", since: null };
    device.state = state;
    device.since = since;
    this.devices.set(key, device);
    return device;
  }
}

/**
 * 429 TooManyRequests ("too many requests were made consecutively to the same device
 * token"): a token bucket per device, `burst` deep, refilled at `ratePerS`. Buckets that
 * have refilled completely carry no state and are pruned once the map grows large.
 */
export class DeviceRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly burst: number,
    private readonly ratePerS: number,
    private readonly pruneAbove = 100_000,
  ) {}

  take(device: string, nowMs: number): boolean {
    const bucket = this.buckets.get(device) ?? { tokens: this.burst, at: nowMs };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * this.ratePerS);
    bucket.at = nowMs;
    if (bucket.tokens < 1) {
      this.buckets.set(device, bucket);
      return false;
    }
    bucket.tokens -= 1;
    this.buckets.set(device, bucket);
    if (this.buckets.size > this.pruneAbove) this.prune(nowMs);
    return true;
  }

  private prune(nowMs: number): void {
    if (this.ratePerS === 0) return;
    for (const [device, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.at) / 1000) * this.ratePerS >= this.burst) this.buckets.delete(device);
    }
  }
}
