import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { BoundedCache } from "@herald/runtime";
import type { CredentialClient } from "../backends.js";
import { fromApiKeyPrincipal, type Principal } from "../principal.js";

/** Asks the credential service who a secret belongs to; null when nobody. */
export type VerifyApiKey = (secret: string) => Promise<Principal | null>;

/** Answers of the credential service that mean "this secret is not a valid key". */
const REJECTED = new Set([Code.Unauthenticated, Code.NotFound, Code.InvalidArgument, Code.PermissionDenied]);

export function rejectedKey(err: unknown): boolean {
  return err instanceof ConnectError && REJECTED.has(err.code);
}

/** VerifyApiKey of the credential service; outages stay errors (503), never a 401. */
export function verifyWith(credential: CredentialClient, defaultLimit: number): VerifyApiKey {
  return async (secret) => {
    try {
      const { principal } = await credential.verifyApiKey({ secret });
      return principal ? fromApiKeyPrincipal(principal, defaultLimit) : null;
    } catch (err) {
      if (rejectedKey(err)) return null;
      throw err;
    }
  };
}

/**
 * API keys resolved to principals, cached by the SHA-256 of the secret (the secret itself
 * is never kept) so that a busy key costs one credential-service call per TTL rather than
 * one per request. Unknown secrets are remembered briefly too, which blunts floods of bad
 * keys. Concurrent first requests of one key share a single lookup.
 */
export class ApiKeyVerifier {
  private readonly cache: BoundedCache<Principal | null>;

  constructor(
    private readonly verify: VerifyApiKey,
    ttlMs: number,
    opts: { maxEntries?: number; now?: () => number } = {},
  ) {
    const negativeTtlMs = Math.min(ttlMs, 2_000);
    this.cache = new BoundedCache({
      maxEntries: opts.maxEntries ?? 10_000,
      ttlMs: (principal) => (principal ? ttlMs : negativeTtlMs),
      now: opts.now,
    });
  }

  principalFor(secret: string): Promise<Principal | null> {
    const digest = createHash("sha256").update(secret, "utf8").digest("hex");
    return this.cache.get(digest, () => this.verify(secret));
  }

  /** Forgets a key this replica saw revoked, so it stops working here at once. */
  forgetKey(identity: string): void {
    this.cache.deleteWhere((p) => p?.identity === identity);
  }

  /** Forgets everything, e.g. after an app (and with it its keys) was deleted. */
  forgetAll(): void {
    this.cache.clear();
  }
}
