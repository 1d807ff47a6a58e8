import type { ApnsKeyView } from "./apns/keys.js";
import type { ConnectionView } from "./connections.js";
import type { ServiceAccountJson, ServiceAccountView } from "./fcm/service-accounts.js";
import type { FaultConfig, FaultInput } from "./faults.js";
import type { Platform } from "./platform.js";
import type { ApnsDelivery, Delivery, DeliveryCount, DeliveryOf, FcmDelivery, WebPushDelivery } from "./recorder.js";
import type { RequestStats } from "./stats.js";
import type { SubscriptionJson } from "./webpush/subscriptions.js";

export type {
  ApnsDelivery,
  ApnsKeyView,
  ConnectionView,
  Delivery,
  DeliveryCount,
  DeliveryOf,
  FaultConfig,
  FaultInput,
  FcmDelivery,
  Platform,
  RequestStats,
  ServiceAccountJson,
  ServiceAccountView,
  SubscriptionJson,
  WebPushDelivery,
};

export interface CreatedSubscription {
  id: string;
  subscription: SubscriptionJson;
}

export interface DeliveryPage<D extends Delivery = Delivery> {
  deliveries: D[];
  /** Pass as `after` for the next page; null when this page was the last. */
  next_after: number | null;
}

/** With `platform` set, deliveries are typed as that platform's. */
export interface DeliveryFilter<P extends Platform = Platform> {
  platform?: P;
  /** Any platform's target: Web Push subscription id, APNs device token, FCM registration token (or `topic:<name>`). */
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

export interface ApnsKeyInput {
  team_id: string;
  key_id: string;
  /** Bundle ids the team's apps have; topics with push-type suffixes (`.voip`, …) follow from them. */
  topics: string[];
  /** Exactly one of the two. */
  p8?: string;
  public_key_pem?: string;
}

export interface ApnsDeviceMark {
  token: string;
  state: "active" | "unregistered" | "expired" | "bad";
  timestamp: number | null;
}

export interface FcmServiceAccountInput {
  project_id: string;
  client_email: string;
  /** Exactly one of the two: a PKCS#8 private key PEM (as in the service-account JSON) or an SPKI public key PEM. */
  private_key?: string;
  public_key?: string;
  /** When given, assertions whose `kid` differs are refused. */
  private_key_id?: string;
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

  /** Registers an APNs provider key (the p8 as downloaded, or its public half) for a team and its app topics. */
  registerApnsKey(key: ApnsKeyInput): Promise<ApnsKeyView> {
    return this.call("POST", "/admin/apns/keys", key);
  }

  /** From now on tokens signed with this key id are refused InvalidProviderToken. */
  async revokeApnsKey(keyId: string): Promise<void> {
    await this.call("DELETE", `/admin/apns/keys/${encodeURIComponent(keyId)}`);
  }

  /** Device tokens (64 hex digits) of `count` devices running the app of `topic` (e.g. `com.example.app`, or `….voip`). */
  async createApnsDevices(topic: string, count = 1): Promise<string[]> {
    const res = await this.call<{ tokens: string[] }>("POST", "/admin/apns/devices", { topic, count });
    return res.tokens;
  }

  /** Pushes to the token get 410 Unregistered with this `timestamp` (ms; default now). */
  unregisterApnsDevice(token: string, timestamp?: number): Promise<ApnsDeviceMark> {
    return this.markApnsDevice(token, "unregister", timestamp);
  }

  /** Pushes to the token get 410 ExpiredToken. */
  expireApnsDevice(token: string, timestamp?: number): Promise<ApnsDeviceMark> {
    return this.markApnsDevice(token, "expire", timestamp);
  }

  /** Pushes to the token get 400 BadDeviceToken. */
  markApnsDeviceBad(token: string): Promise<ApnsDeviceMark> {
    return this.markApnsDevice(token, "bad");
  }

  reviveApnsDevice(token: string): Promise<ApnsDeviceMark> {
    return this.markApnsDevice(token, "revive");
  }

  /** HTTP/2 connections that carried APNs requests: streams advertised and used, violations, token updates. */
  apnsConnections(): Promise<{ connections: ConnectionView[]; violations: number }> {
    return this.call("GET", "/admin/apns/connections");
  }

  /** Forgets closed connections. */
  async clearApnsConnections(): Promise<void> {
    await this.call("DELETE", "/admin/apns/connections");
  }

  /**
   * A new service account of `projectId` with a key pair made by the simulator: the
   * service-account JSON, `token_uri` pointing at the simulator, private key included.
   */
  async createFcmServiceAccount(projectId: string, clientEmail?: string): Promise<ServiceAccountJson> {
    const res = await this.call<{ service_account: ServiceAccountJson }>("POST", "/admin/fcm/service-accounts", {
      project_id: projectId,
      client_email: clientEmail,
    });
    return res.service_account;
  }

  /** Registers a service account whose key the caller made (the PEM of either half; only the public half is kept). */
  async registerFcmServiceAccount(account: FcmServiceAccountInput): Promise<ServiceAccountView> {
    const res = await this.call<{ account: ServiceAccountView }>("POST", "/admin/fcm/service-accounts", account);
    return res.account;
  }

  /** Deletes the account: its assertions get invalid_grant and its access tokens stop working. */
  async revokeFcmServiceAccount(clientEmail: string): Promise<void> {
    await this.call("DELETE", `/admin/fcm/service-accounts/${encodeURIComponent(clientEmail)}`);
  }

  /** Every account with the number of access tokens issued to it. */
  fcmServiceAccounts(): Promise<{ service_accounts: ServiceAccountView[]; tokens_issued: number }> {
    return this.call("GET", "/admin/fcm/service-accounts");
  }

  /** Registration tokens of `count` app instances of the Firebase project. */
  async createFcmDevices(projectId: string, count = 1): Promise<string[]> {
    const res = await this.call<{ tokens: string[] }>("POST", "/admin/fcm/devices", { project_id: projectId, count });
    return res.tokens;
  }

  /** Sends to the token get 404 UNREGISTERED from now on. */
  async unregisterFcmDevice(token: string): Promise<void> {
    await this.call("POST", `/admin/fcm/devices/${encodeURIComponent(token)}/unregister`);
  }

  async reviveFcmDevice(token: string): Promise<void> {
    await this.call("POST", `/admin/fcm/devices/${encodeURIComponent(token)}/revive`);
  }

  /** One page of recorded deliveries, oldest first. */
  deliveries<P extends Platform = Platform>(filter: DeliveryFilter<P> = {}): Promise<DeliveryPage<DeliveryOf<P>>> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) query.set(k, String(v));
    const qs = query.toString();
    return this.call("GET", `/admin/deliveries${qs ? `?${qs}` : ""}`);
  }

  /** Every recorded delivery matching the filter, following pages. */
  async allDeliveries<P extends Platform = Platform>(
    filter: Omit<DeliveryFilter<P>, "after"> = {},
  ): Promise<DeliveryOf<P>[]> {
    const out: DeliveryOf<P>[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await this.deliveries<P>({ limit: 10_000, ...filter, after });
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
    return fetch(`${this.baseUrl}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  }

  private markApnsDevice(
    token: string,
    mark: "unregister" | "expire" | "bad" | "revive",
    timestamp?: number,
  ): Promise<ApnsDeviceMark> {
    return this.call(
      "POST",
      `/admin/apns/devices/${encodeURIComponent(token)}/${mark}`,
      timestamp === undefined ? undefined : { timestamp },
    );
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
