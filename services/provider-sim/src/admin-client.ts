import type { FaultConfig, FaultInput } from "./faults.js";
import type { Platform } from "./platform.js";
import type { Delivery, DeliveryCount } from "./recorder.js";
import type { RequestStats } from "./stats.js";
import type { SubscriptionJson } from "./webpush/subscriptions.js";

export type { Delivery, DeliveryCount, FaultConfig, FaultInput, Platform, RequestStats, SubscriptionJson };

export interface CreatedSubscription {
  id: string;
  subscription: SubscriptionJson;
}

export interface DeliveryPage {
  deliveries: Delivery[];
  /** Pass as `after` for the next page; null when this page was the last. */
  next_after: number | null;
}

export interface DeliveryFilter {
  platform?: Platform;
  /** Any platform's target (for Web Push: the subscription id). */
  target?: string;
  subscription_id?: string;
  limit?: number;
  after?: number;
}

export class SimAdminError extends Error {
  override name = "SimAdminError";
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`provider-sim admin API answered ${status}: ${JSON.stringify(body)}`);
  }
}

/** Typed client of the simulator's admin API, for tests and benchmarks. */
export class SimAdminClient {
  private readonly baseUrl: string;

  /** `baseUrl`: the admin port, e.g. `http://127.0.0.1:4444`. */
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  /** Subscribes `count` simulated browsers with the app's VAPID public key (base64url). */
  async createWebPushSubscriptions(applicationServerKey: string, count = 1): Promise<CreatedSubscription[]> {
    const res = await this.call<{ subscriptions: CreatedSubscription[] }>("POST", "/admin/webpush/subscriptions", {
      application_server_key: applicationServerKey,
      count,
    });
    return res.subscriptions;
  }

  /** From now on pushes to the subscription get 410 Gone. */
  async markWebPushGone(subscriptionId: string): Promise<void> {
    await this.call("POST", `/admin/webpush/subscriptions/${encodeURIComponent(subscriptionId)}/gone`);
  }

  async reviveWebPush(subscriptionId: string): Promise<void> {
    await this.call("DELETE", `/admin/webpush/subscriptions/${encodeURIComponent(subscriptionId)}/gone`);
  }

  /** One page of recorded deliveries, oldest first. */
  deliveries(filter: DeliveryFilter = {}): Promise<DeliveryPage> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) query.set(k, String(v));
    const qs = query.toString();
    return this.call("GET", `/admin/deliveries${qs ? `?${qs}` : ""}`);
  }

  /** Every recorded delivery matching the filter, following pages. */
  async allDeliveries(filter: Omit<DeliveryFilter, "after"> = {}): Promise<Delivery[]> {
    const out: Delivery[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await this.deliveries({ limit: 10_000, ...filter, after });
      out.push(...page.deliveries);
      if (page.next_after === null) return out;
      after = page.next_after;
    }
  }

  /** Exact counts (never trimmed), in total and per target. */
  deliveryCount(platform?: Platform): Promise<DeliveryCount> {
    return this.call("GET", `/admin/deliveries/count${platform ? `?platform=${platform}` : ""}`);
  }

  async clearDeliveries(): Promise<void> {
    await this.call("DELETE", "/admin/deliveries");
  }

  async setFaults(platform: Platform, faults: FaultInput): Promise<FaultConfig> {
    const res = await this.call<{ faults: FaultConfig }>("PUT", `/admin/faults/${platform}`, faults);
    return res.faults;
  }

  async faults(platform: Platform): Promise<FaultConfig | null> {
    const res = await this.call<{ faults: FaultConfig | null }>("GET", `/admin/faults/${platform}`);
    return res.faults;
  }

  async clearFaults(platform: Platform): Promise<void> {
    await this.call("DELETE", `/admin/faults/${platform}`);
  }

  stats(): Promise<RequestStats & { platforms: Partial<Record<Platform, RequestStats>> }> {
    return this.call("GET", "/admin/stats");
  }

  async resetStats(): Promise<void> {
    await this.call("DELETE", "/admin/stats");
  }

  async healthy(): Promise<boolean> {
    return fetch(`${this.baseUrl}/healthz`).then((r) => r.ok, () => false);
  }

  private async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (!res.ok) throw new SimAdminError(res.status, parsed);
    return parsed as T;
  }
}
