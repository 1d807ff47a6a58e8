import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import type { DeliveryBatch, DeliveryTarget } from "@herald/proto/delivery";
import { type Logger, sleep } from "@herald/runtime";
import {
  CredentialsError,
  recordProviderResponse,
  type Http2Client,
  type Http2Target,
  type Provider,
  type SendContext,
  type SendResult,
} from "@herald/sender";
import { classify } from "./fcm-errors.js";
import {
  fcmData,
  fcmMessage,
  MAX_PAYLOAD_BYTES,
  payloadBytes,
  remainingTtlSeconds,
  sendBody,
  type DataResult,
} from "./fcm-message.js";
import { OAuthRejectedError, OAuthUnavailableError, type OAuthTokenSource } from "./oauth-token.js";
import { parseServiceAccount, type ServiceAccount } from "./service-account.js";

/** A parsed service account plus where its project's `messages:send` goes. */
export interface FcmAccount extends ServiceAccount {
  /** FCM's origin: every project shares its connections (the token travels per request). */
  sendTarget: Http2Target;
  /** `/v1/projects/<project>/messages:send` under FCM_URL's path. */
  sendPath: string;
}

export interface FcmProviderDeps {
  /** FCM_URL: `https://fcm.googleapis.com` or a stand-in, without a trailing slash. */
  fcmUrl: string;
  /** FCM_TOKEN_URL: replaces every service account's token_uri (dev mode's simulator). */
  tokenUrlOverride?: string;
  /** The shared HTTP/2 pool (packages/sender). */
  transport: Http2Client;
  tokens: OAuthTokenSource;
  ceiling: { acquire(appId: string, signal: AbortSignal): Promise<void> };
  log: Logger;
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * FCM HTTP v1 (docs/providers.md §FCM requests and OAuth): one `messages:send` per
 * device over pooled HTTP/2, with an OAuth access token from the service account's
 * token_uri. Before a message leaves it waits for its app's share of the rate ceiling
 * and for any slow-down FCM asked of the project (QUOTA_EXCEEDED).
 */
export class FcmProvider implements Provider<FcmAccount> {
  readonly platform = "android" as const;
  private readonly data = new WeakMap<DeliveryBatch, DataResult>();
  private readonly pausedUntil = new Map<string, number>();
  private readonly logged = new WeakSet<Error>();
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;

  constructor(private readonly deps: FcmProviderDeps) {
    this.now = deps.now ?? Date.now;
    this.sleep = deps.sleep ?? sleep;
  }

  prepareCredentials(response: GetSendCredentialsResponse): FcmAccount {
    if (response.credentials.case !== "fcm")
      throw new CredentialsError("the android platform config holds no service account");
    const parsed = parseServiceAccount(response.credentials.value.serviceAccountJson);
    const account = this.deps.tokenUrlOverride ? { ...parsed, tokenUri: this.deps.tokenUrlOverride } : parsed;
    const sendUrl = new URL(`${this.deps.fcmUrl}/v1/projects/${encodeURIComponent(account.projectId)}/messages:send`);
    return { ...account, sendTarget: { origin: sendUrl.origin }, sendPath: sendUrl.pathname };
  }

  async send(target: DeliveryTarget, ctx: SendContext<FcmAccount>): Promise<SendResult> {
    const { batch, payload, credentials: account, signal } = ctx;
    if (!target.pushToken) return { kind: "failed", reason: "MissingDeviceToken" };
    const data = this.batchData(batch);
    if (!data.ok) return { kind: "failed", reason: data.reason };
    const message = fcmMessage(target.pushToken, batch, payload, data.data, remainingTtlSeconds(batch, this.now()));
    if (payloadBytes(message) > MAX_PAYLOAD_BYTES) return { kind: "failed", reason: "PayloadTooLarge" };

    await this.slowDown(account.projectId, signal);
    let token: string;
    try {
      token = await this.deps.tokens.accessToken(account);
    } catch (err) {
      return this.oauthFailure(err, account);
    }
    await this.deps.ceiling.acquire(batch.appId, signal);
    const res = await this.deps.transport.request(
      account.sendTarget,
      {
        path: account.sendPath,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json; charset=utf-8" },
        body: Buffer.from(sendBody(message)),
      },
      signal,
    );
    const c = classify(res, this.now());
    recordProviderResponse(
      ctx,
      account.sendTarget.origin,
      res.status,
      c.result.kind === "delivered" ? undefined : c.result.reason,
    );
    if (c.staleToken) this.deps.tokens.invalidate(account, token);
    if (c.slowDownMs) {
      const until = this.now() + c.slowDownMs;
      if (until > (this.pausedUntil.get(account.projectId) ?? 0)) this.pausedUntil.set(account.projectId, until);
    }
    return c.result;
  }

  close(): Promise<void> {
    return this.deps.transport.close();
  }

  /** Waits while FCM asked this project to slow down (the pause may be extended meanwhile). */
  private async slowDown(projectId: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      const until = this.pausedUntil.get(projectId);
      if (until === undefined) return;
      const wait = until - this.now();
      if (wait <= 0) {
        if (this.pausedUntil.get(projectId) === until) this.pausedUntil.delete(projectId);
        return;
      }
      await this.sleep(wait, signal);
    }
  }

  private oauthFailure(err: unknown, account: FcmAccount): SendResult {
    if (err instanceof OAuthRejectedError) {
      if (!this.logged.has(err)) {
        this.logged.add(err);
        this.deps.log.warn(
          { clientEmail: account.clientEmail, error: err.error, description: err.description },
          "token endpoint rejected the service account",
        );
      }
      return { kind: "failed", reason: `OAuthRejected: ${err.message}` };
    }
    if (err instanceof OAuthUnavailableError) return { kind: "retry", reason: `OAuthUnavailable: ${err.message}` };
    throw err;
  }

  /** The batch's data, stringified and checked once for all its devices. */
  private batchData(batch: DeliveryBatch): DataResult {
    let d = this.data.get(batch);
    if (!d) this.data.set(batch, (d = fcmData(batch.dataJson)));
    return d;
  }
}
