import type { KeyObject } from "node:crypto";
import { BoundedCache } from "@herald/runtime";
import { SignJWT } from "jose";

/** A token-auth signing key (.p8) of an Apple developer team. */
export interface SigningKey {
  teamId: string;
  /** The 10-character key id Apple shows for the .p8. */
  keyId: string;
  privateKey: KeyObject;
  /**
   * Identifies the key material (the credential service's fingerprint): a corrected .p8
   * uploaded under the same key id gets tokens of its own instead of the old ones.
   */
  fingerprint: string;
}

export type Signer = (key: SigningKey, issuedAtS: number) => Promise<string>;

export interface ProviderTokenOptions {
  /** Re-sign once a token is this old. Apple: no sooner than 20 and no later than 60 minutes. */
  refreshAfterMs?: number;
  /** Never re-sign a key's token more often than this, even when APNs calls it expired. */
  minIntervalMs?: number;
  /** How long a token APNs called invalid keeps failing sends without asking APNs again. */
  rejectionTtlMs?: number;
  now?: () => number;
  sign?: Signer;
  onSign?: (key: SigningKey) => void;
  maxEntries?: number;
}

export interface ProviderToken {
  jwt: string;
  /** Set when APNs rejected this very token a moment ago (InvalidProviderToken). */
  rejected?: string;
}

interface Entry {
  jwt: string;
  /** What current() hands out: one object per signature, not one per send. */
  token: ProviderToken;
  issuedAt: number;
  rejected?: { reason: string; at: number };
}

const MINUTE = 60_000;

export const signProviderToken: Signer = (key, issuedAtS) =>
  new SignJWT({ iss: key.teamId, iat: issuedAtS })
    .setProtectedHeader({ alg: "ES256", kid: key.keyId })
    .sign(key.privateKey);

export const keyIdentity = (key: SigningKey): string => `${key.teamId}.${key.keyId}.${key.fingerprint}`;

/**
 * The APNs provider JWT per signing key: one signature serves every send of every
 * connection until it is `refreshAfterMs` old, because APNs answers a token changed
 * more often than every 20 minutes with TooManyProviderTokenUpdates and one older
 * than an hour with ExpiredProviderToken. Concurrent sends share one signing.
 */
export class ProviderTokens {
  /** Each key's token while it is younger than refreshAfterMs. */
  private readonly entries: BoundedCache<Entry>;
  private readonly minIntervalMs: number;
  private readonly rejectionTtlMs: number;
  private readonly now: () => number;
  private readonly sign: Signer;

  constructor(private readonly opts: ProviderTokenOptions = {}) {
    const refreshAfterMs = opts.refreshAfterMs ?? 50 * MINUTE;
    this.minIntervalMs = opts.minIntervalMs ?? 20 * MINUTE;
    this.rejectionTtlMs = opts.rejectionTtlMs ?? MINUTE;
    if (refreshAfterMs < this.minIntervalMs || refreshAfterMs >= 60 * MINUTE) {
      throw new Error("the provider token must be refreshed between minIntervalMs and 60 minutes");
    }
    const now = opts.now ?? Date.now;
    this.now = now;
    this.sign = opts.sign ?? signProviderToken;
    this.entries = new BoundedCache<Entry>({
      maxEntries: opts.maxEntries ?? 10_000,
      ttlMs: (e) => e.issuedAt + refreshAfterMs - now(),
      now,
    });
  }

  async get(key: SigningKey): Promise<ProviderToken> {
    return this.current(key) ?? { jwt: (await this.entries.get(keyIdentity(key), () => this.signNew(key))).jwt };
  }

  /** The key's token when one is fresh, without waiting (the hot path of every send); else undefined. */
  current(key: SigningKey): ProviderToken | undefined {
    const hit = this.entries.peek(keyIdentity(key));
    if (!hit) return undefined;
    if (hit.rejected && this.now() - hit.rejected.at < this.rejectionTtlMs)
      return { jwt: hit.jwt, rejected: hit.rejected.reason };
    return hit.token;
  }

  /**
   * APNs called `jwt` expired. Drops it so the next get() signs a new one, unless it is
   * younger than minIntervalMs (then our clock, not the token, is wrong, and a new
   * signature would only count against the update limit). True when a retry would
   * carry a different token.
   */
  expired(key: SigningKey, jwt: string): boolean {
    const id = keyIdentity(key);
    const hit = this.entries.peek(id);
    if (!hit || hit.jwt !== jwt) return true;
    if (this.now() - hit.issuedAt < this.minIntervalMs) return false;
    this.entries.delete(id);
    return true;
  }

  /** APNs refused `jwt` (wrong key, team or signature): sends fail fast with `reason` for a while. */
  rejected(key: SigningKey, jwt: string, reason: string): void {
    const hit = this.entries.peek(keyIdentity(key));
    if (hit && hit.jwt === jwt) hit.rejected = { reason, at: this.now() };
  }

  private async signNew(key: SigningKey): Promise<Entry> {
    const issuedAt = this.now();
    const jwt = await this.sign(key, Math.floor(issuedAt / 1000));
    this.opts.onSign?.(key);
    return { jwt, token: { jwt }, issuedAt };
  }
}
