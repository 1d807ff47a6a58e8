import { createHash } from "node:crypto";
import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import type { DeliveryBatch, DeliveryTarget, RenderedPayload } from "@herald/proto/delivery";
import { checkEndpointUrl, type EndpointPolicy } from "@herald/runtime";
import { Gauge, type Registry } from "prom-client";
import {
  CredentialsError,
  parseRetryAfter,
  recordProviderResponse,
  type Provider,
  type SendContext,
  type SendResult,
} from "@herald/sender";
import { InvalidSubscriberKeyError, keyAgreement, PayloadTooLargeError } from "./ece.js";
import { type Encryptor, inlineEncryptor } from "./encryptor.js";
import type { PushTransport, PushResponse } from "./push-transport.js";
import type { VapidKeys, VapidSigner } from "./vapid.js";
import { webPushPayload } from "./webpush-payload.js";

/** What a push service keeps an undelivered message for when the send sets no ttl: 4 weeks. */
export const DEFAULT_TTL_SECONDS = 28 * 24 * 3600;

interface Subscription {
  endpoint: URL;
  p256dh: Buffer;
  auth: Buffer;
}

/** Web Push (RFC 8030) with RFC 8291 encryption and VAPID (RFC 8292). */
export class WebPushProvider implements Provider<VapidKeys> {
  readonly platform = "web" as const;
  /** The plaintext of each (batch, language): the same for every device, built once. */
  private readonly plaintexts = new WeakMap<DeliveryBatch, Map<number, Buffer>>();

  constructor(
    private readonly transport: PushTransport,
    private readonly signer: VapidSigner,
    private readonly policy: EndpointPolicy,
    private readonly encryptor: Encryptor = inlineEncryptor,
  ) {}

  /** Which key agreement encrypts (key-agreement.ts): a sender that fell back to node:crypto shows. */
  registerMetrics(registry: Registry): void {
    new Gauge({
      name: "herald_webpush_key_agreement",
      help: "1 for the implementation of RFC 8291's key agreement in use: native (the addon) or node:crypto (~40 % more CPU per message)",
      labelNames: ["implementation"],
      registers: [registry],
    }).set({ implementation: keyAgreement.kind }, 1);
  }

  prepareCredentials(response: GetSendCredentialsResponse): VapidKeys {
    if (response.credentials.case !== "vapid")
      throw new CredentialsError("the web platform config holds no VAPID keys");
    const { publicKey, privateKey, subject } = response.credentials.value;
    if (Buffer.from(publicKey, "base64url").length !== 65 || Buffer.from(privateKey, "base64url").length !== 32) {
      throw new CredentialsError("VAPID keys have the wrong length");
    }
    return { publicKey, privateKey, subject };
  }

  async send(target: DeliveryTarget, ctx: SendContext<VapidKeys>): Promise<SendResult> {
    const sub = parseSubscription(target.pushToken);
    if (!sub) return { kind: "failed", reason: "InvalidSubscription" };
    const allowed = checkEndpointUrl(sub.endpoint, this.policy);
    if (!allowed.ok) return { kind: "failed", reason: `EndpointRefused: ${allowed.reason}` };

    const { batch, payload } = ctx;
    const plaintext = this.plaintext(batch, payload);
    let body: Buffer;
    try {
      body = await this.encryptor.encrypt(plaintext, { publicKey: sub.p256dh, authSecret: sub.auth });
    } catch (err) {
      if (err instanceof PayloadTooLargeError) return { kind: "failed", reason: "PayloadTooLarge" };
      if (err instanceof InvalidSubscriberKeyError) return { kind: "failed", reason: "InvalidSubscription" };
      throw err;
    }
    const headers: Record<string, string> = {
      ttl: String(batch.ttlSeconds || DEFAULT_TTL_SECONDS),
      urgency: batch.highPriority ? "high" : "normal",
      "content-encoding": "aes128gcm",
      "content-type": "application/octet-stream",
      authorization: await this.signer.authorization(sub.endpoint, ctx.credentials),
    };
    if (batch.collapseId) headers.topic = topicFor(batch.collapseId);
    let res: PushResponse;
    try {
      res = await this.transport.post(sub.endpoint, headers, body, ctx.signal);
    } catch (err) {
      if ((err as { code?: string }).code === "ESSRF")
        return { kind: "failed", reason: `EndpointRefused: ${(err as Error).message}` };
      throw err;
    }
    const result = classify(res);
    recordProviderResponse(
      ctx,
      sub.endpoint.origin,
      res.status,
      result.kind === "delivered" ? undefined : result.reason,
    );
    return result;
  }

  async close(): Promise<void> {
    await Promise.all([this.transport.close(), this.encryptor.close()]);
  }

  private plaintext(batch: DeliveryBatch, payload: RenderedPayload): Buffer {
    let perBatch = this.plaintexts.get(batch);
    if (!perBatch) {
      perBatch = new Map();
      this.plaintexts.set(batch, perBatch);
    }
    let text = perBatch.get(payload.index);
    if (!text) {
      text = Buffer.from(JSON.stringify(webPushPayload(batch, payload)));
      perBatch.set(payload.index, text);
    }
    return text;
  }
}

/** Maps a push service's answer (RFC 8030 §5, docs/providers.md §Web Push responses) to an outcome. */
export function classify(res: PushResponse): SendResult {
  const s = res.status;
  if (s >= 200 && s < 300) return { kind: "delivered" };
  if (s === 404 || s === 410) return { kind: "bounced", reason: s === 410 ? "Gone" : "NotFound" };
  if (s === 429)
    return {
      kind: "retry",
      reason: "TooManyRequests",
      throttled: true,
      retryAfterMs: parseRetryAfter(res.headers["retry-after"]),
    };
  if (s >= 500)
    return { kind: "retry", reason: `ServerError:${s}`, retryAfterMs: parseRetryAfter(res.headers["retry-after"]) };
  if (s === 413) return { kind: "failed", reason: "PayloadTooLarge" };
  if (s === 401 || s === 403) return { kind: "failed", reason: `VapidRejected:${s}` };
  return { kind: "failed", reason: `Rejected:${s}` };
}

/** A Topic header is at most 32 base64url characters; longer collapse ids are hashed to fit. */
export function topicFor(collapseId: string): string {
  if (/^[A-Za-z0-9_-]{1,32}$/.test(collapseId)) return collapseId;
  return createHash("sha256").update(collapseId).digest("base64url").slice(0, 32);
}

function parseSubscription(token: string): Subscription | undefined {
  try {
    const raw = JSON.parse(token) as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
    if (typeof raw.endpoint !== "string" || typeof raw.keys?.p256dh !== "string" || typeof raw.keys.auth !== "string")
      return undefined;
    const p256dh = Buffer.from(raw.keys.p256dh, "base64url");
    const auth = Buffer.from(raw.keys.auth, "base64url");
    if (p256dh.length !== 65 || auth.length !== 16) return undefined;
    return { endpoint: new URL(raw.endpoint), p256dh, auth };
  } catch {
    return undefined;
  }
}
