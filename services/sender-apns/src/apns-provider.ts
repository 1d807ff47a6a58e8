import { createPrivateKey, type KeyObject } from "node:crypto";
import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import type { DeliveryBatch, DeliveryTarget, RenderedPayload } from "@herald/proto/delivery";
import type { Registry } from "prom-client";
import {
  CredentialsError,
  parseRetryAfter,
  recordProviderResponse,
  type Http2Client,
  type Http2Response,
  type Http2Target,
  type Provider,
  type SendContext,
  type SendResult,
} from "@herald/sender";
import { buildNotification, isDeviceToken, parseData, type AlertOptions, type BuildResult } from "./apns-payload.js";
import { keyIdentity, type ProviderTokens, type SigningKey } from "./provider-token.js";

export type ApnsEnvironment = "production" | "sandbox";

export interface ApnsCredentials {
  key: SigningKey;
  /** apns-topic: the app's bundle id. */
  topic: string;
  environment: ApnsEnvironment;
  /** Where its requests go: the origin of its environment, one pool per (team, key). */
  target: Http2Target;
}

export const APPLE_ORIGINS: Record<ApnsEnvironment, string> = {
  production: "https://api.push.apple.com",
  sandbox: "https://api.sandbox.push.apple.com",
};

/** An APNs error body: `{"reason": …}`, plus the time APNs last saw the token invalid (ms) with 410. */
export interface ApnsError {
  reason?: string;
  timestamp?: number;
}

export interface ApnsProviderDeps {
  /** The shared HTTP/2 pool (packages/sender), grouped per (origin, team, key). */
  pool: Http2Client;
  tokens: ProviderTokens;
  /** One origin for both environments (APNS_URL); Apple's hosts when unset. */
  baseUrl?: string;
  /** What every alert carries unless its send sets its own (the default sound). */
  alert?: AlertOptions;
  registerMetrics?: (registry: Registry) => void;
}

const APPLE_ID = /^[A-Z0-9]{10}$/;

/** Why a token error fails a send, in words an operator can act on. */
const TOKEN_HINTS: Record<string, string> = {
  InvalidProviderToken: "APNs rejected the provider token; check the .p8 key, key id and team id",
  ExpiredProviderToken: "APNs calls the provider token expired; check this host's clock",
  MissingProviderToken: "APNs saw no provider token",
};

/** Apple's HTTP/2 provider API with token (.p8) authentication. */
export class ApnsProvider implements Provider<ApnsCredentials> {
  readonly platform = "ios" as const;
  private readonly built = new WeakMap<DeliveryBatch, Map<string, BuildResult>>();

  constructor(private readonly deps: ApnsProviderDeps) {}

  prepareCredentials(response: GetSendCredentialsResponse): ApnsCredentials {
    if (response.credentials.case !== "apns") throw new CredentialsError("the ios platform config holds no APNs key");
    const { p8Key, keyId, teamId, topic, environment } = response.credentials.value;
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(p8Key);
    } catch {
      throw new CredentialsError("the .p8 key does not parse");
    }
    if (privateKey.asymmetricKeyType !== "ec" || privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
      throw new CredentialsError("the .p8 key is not a P-256 key");
    }
    if (!APPLE_ID.test(keyId) || !APPLE_ID.test(teamId))
      throw new CredentialsError("key id and team id must be 10 characters A-Z or 0-9");
    if (!topic) throw new CredentialsError("the APNs config has no topic (bundle id)");
    if (environment !== "production" && environment !== "sandbox")
      throw new CredentialsError(`unknown APNs environment "${environment}"`);
    const key = { teamId, keyId, privateKey, fingerprint: response.fingerprint };
    const target = { origin: this.deps.baseUrl ?? APPLE_ORIGINS[environment], group: keyIdentity(key) };
    return { key, topic, environment, target };
  }

  async send(target: DeliveryTarget, ctx: SendContext<ApnsCredentials>): Promise<SendResult> {
    // Hex only: the token becomes part of the request path.
    if (!isDeviceToken(target.pushToken)) return { kind: "bounced", reason: "BadDeviceToken" };
    const built = this.notification(ctx.batch, ctx.payload, ctx.credentials.topic);
    if (!built.ok) return { kind: "failed", reason: built.reason };
    const { key, target: poolTarget } = ctx.credentials;
    const { headers, body } = built.notification;
    let refreshedToken = false;
    let reconnected = false;
    for (;;) {
      const token = this.deps.tokens.current(key) ?? (await this.deps.tokens.get(key));
      if (token.rejected) return { kind: "failed", reason: token.rejected };
      const res = await this.deps.pool.request(
        poolTarget,
        { path: `/3/device/${target.pushToken}`, headers: { ...headers, authorization: `bearer ${token.jwt}` }, body },
        ctx.signal,
      );
      const error = parseError(res);
      recordProviderResponse(ctx, poolTarget.origin, res.status, error.reason);
      if (res.status === 403 && error.reason === "ExpiredProviderToken" && !refreshedToken) {
        refreshedToken = true;
        if (this.deps.tokens.expired(key, token.jwt)) continue;
      }
      if (res.status === 429 && error.reason === "TooManyProviderTokenUpdates") {
        // This connection is unusable for a while; a fresh one starts with our current token.
        res.retire("TooManyProviderTokenUpdates");
        if (!reconnected) {
          reconnected = true;
          continue;
        }
      }
      if (error.reason === "Shutdown" || error.reason === "IdleTimeout") res.retire(error.reason);
      const result = classify(res.status, error, res.headers["retry-after"]);
      if (res.status === 403 && error.reason === "InvalidProviderToken" && result.kind === "failed") {
        this.deps.tokens.rejected(key, token.jwt, result.reason);
      }
      return result;
    }
  }

  close(): Promise<void> {
    return this.deps.pool.close();
  }

  registerMetrics(registry: Registry): void {
    this.deps.registerMetrics?.(registry);
  }

  /** The request body and headers, built once per (batch, language). */
  private notification(batch: DeliveryBatch, payload: RenderedPayload, topic: string): BuildResult {
    let perBatch = this.built.get(batch);
    if (!perBatch) {
      perBatch = new Map();
      this.built.set(batch, perBatch);
    }
    const cacheKey = `${payload.index}|${topic}`;
    let result = perBatch.get(cacheKey);
    if (!result) {
      let data: Record<string, unknown> | undefined;
      try {
        data = parseData(batch.dataJson);
      } catch {
        data = undefined;
      }
      result = data
        ? buildNotification(batch, payload, data, topic, this.deps.alert)
        : { ok: false, reason: "InvalidData" };
      perBatch.set(cacheKey, result);
    }
    return result;
  }
}

/**
 * Maps an APNs answer (docs/providers.md §APNs errors) to an outcome: 200 delivered;
 * 410 and BadDeviceToken a dead token (with APNs' timestamp, so a later re-registration
 * wins); 429 and 5xx transient; every other 4xx permanent with APNs' reason kept.
 */
export function classify(status: number, error: ApnsError, retryAfter?: string | string[]): SendResult {
  const reason = error.reason ?? `HTTP${status}`;
  const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  if (status >= 200 && status < 300) return { kind: "delivered" };
  if (status === 410 || (status === 400 && reason === "BadDeviceToken")) {
    return error.timestamp === undefined
      ? { kind: "bounced", reason }
      : { kind: "bounced", reason, observedAt: new Date(error.timestamp) };
  }
  if (status === 429) return withRetryAfter({ kind: "retry", reason, throttled: true }, retryAfterMs);
  if (status >= 500) return withRetryAfter({ kind: "retry", reason }, retryAfterMs);
  // The connection idled out under the request; another connection will take it.
  if (reason === "IdleTimeout") return { kind: "retry", reason };
  const hint = TOKEN_HINTS[reason];
  return { kind: "failed", reason: hint ? `${reason}: ${hint}` : reason };
}

function withRetryAfter(result: Extract<SendResult, { kind: "retry" }>, retryAfterMs: number | undefined): SendResult {
  return retryAfterMs === undefined ? result : { ...result, retryAfterMs };
}

/** The latest time a JavaScript Date can hold (ECMAScript's time range), in ms since the epoch. */
const MAX_DATE_MS = 8.64e15;

/** Reads the JSON error body; a body that is not APNs' shape yields no reason. */
export function parseError(res: Pick<Http2Response, "status" | "body">): ApnsError {
  if (res.status === 200 || !res.body) return {};
  try {
    const parsed = JSON.parse(res.body) as { reason?: unknown; timestamp?: unknown };
    const out: ApnsError = {};
    if (typeof parsed.reason === "string" && /^[A-Za-z]{1,64}$/.test(parsed.reason)) out.reason = parsed.reason;
    const ts = typeof parsed.timestamp === "string" ? Number(parsed.timestamp) : parsed.timestamp;
    // Only a time a Date can hold: an invalid one would fail the whole batch where it becomes the invalidation's.
    if (typeof ts === "number" && ts > 0 && ts <= MAX_DATE_MS) out.timestamp = ts;
    return out;
  } catch {
    return {};
  }
}

/** Whether an answer shows APNs accepted the connection's token: anything but a token error. */
export function tokenAccepted(status: number, body: string): boolean {
  if (status >= 200 && status < 300) return true;
  if (status >= 500) return false;
  const { reason } = parseError({ status, body });
  return status !== 403 && reason !== "TooManyProviderTokenUpdates";
}
