import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import type { DeliveryBatch, DeliveryTarget, RenderedPayload } from "@herald/proto/delivery";
import type { PlatformSubject } from "@herald/runtime";
import type { Registry } from "prom-client";

/** What one attempt to hand one device's message to a provider came to. */
export type SendResult =
  | { kind: "delivered" }
  /** The provider declared the token dead; observedAt is when (provider time if given). */
  | { kind: "bounced"; reason: string; observedAt?: Date }
  /** Permanent: retrying cannot help (bad credentials, bad request). */
  | { kind: "failed"; reason: string }
  /** Transient: try again later; throttled when the provider rate-limited us. */
  | { kind: "retry"; reason: string; retryAfterMs?: number; throttled?: boolean };

export interface SendContext<C> {
  batch: DeliveryBatch;
  payload: RenderedPayload;
  credentials: C;
  signal: AbortSignal;
  /** Set by the provider (recordProviderResponse) when an answer came: for metrics and the span. */
  response?: { status: number };
}

/**
 * A push provider (APNs, FCM, Web Push) as the sender framework sees it. The framework
 * does the queueing, concurrency, retries, outcomes and invalidations; a provider only
 * sends one message and classifies the answer.
 */
export interface Provider<C> {
  readonly platform: PlatformSubject;
  /** Turns decrypted credentials into what send() needs; throws CredentialsError if unusable. */
  prepareCredentials(response: GetSendCredentialsResponse): C | Promise<C>;
  send(target: DeliveryTarget, ctx: SendContext<C>): Promise<SendResult>;
  close(): Promise<void>;
  /** Adds the provider's own metrics (connections, tokens, …) to the sender's registry. */
  registerMetrics?(registry: Registry): void;
}

/** Credentials that exist but cannot be used: every message of the batch fails with this reason. */
export class CredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CredentialsError";
  }
}
