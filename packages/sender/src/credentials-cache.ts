import { Code, ConnectError } from "@connectrpc/connect";
import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import type { Platform } from "@herald/proto/common";
import { BoundedCache } from "@herald/runtime";
import { CredentialsError } from "./provider.js";

export type CredentialsResult<C> = { ok: true; credentials: C; fingerprint: string } | { ok: false; reason: string };

export type FetchCredentials = (appId: string, platform: Platform) => Promise<GetSendCredentialsResponse>;

/**
 * Decrypted credentials per app, kept in memory only, for ttlMs; concurrent batches of one
 * app share a single fetch. "Not configured" and unusable credentials are cached briefly
 * too, so a campaign to an unconfigured app fails fast instead of hammering the service.
 * Errors reaching the credential service are not cached: the caller retries the batch.
 */
export class CredentialsCache<C> {
  private readonly cache: BoundedCache<CredentialsResult<C>>;

  constructor(
    private readonly fetch: FetchCredentials,
    private readonly prepare: (r: GetSendCredentialsResponse) => C | Promise<C>,
    private readonly platform: Platform,
    ttlMs = 60_000,
    negativeTtlMs = 5_000,
    maxEntries = 10_000,
    now: () => number = Date.now,
  ) {
    this.cache = new BoundedCache({ maxEntries, ttlMs: (r) => (r.ok ? ttlMs : negativeTtlMs), now });
  }

  get(appId: string): Promise<CredentialsResult<C>> {
    return this.cache.get(appId, () => this.load(appId));
  }

  private async load(appId: string): Promise<CredentialsResult<C>> {
    let response: GetSendCredentialsResponse;
    try {
      response = await this.fetch(appId, this.platform);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) {
        return { ok: false, reason: "CredentialsNotConfigured" };
      }
      throw err;
    }
    try {
      return { ok: true, credentials: await this.prepare(response), fingerprint: response.fingerprint };
    } catch (err) {
      if (err instanceof CredentialsError) return { ok: false, reason: `InvalidCredentials: ${err.message}` };
      throw err;
    }
  }
}
