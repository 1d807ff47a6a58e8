import { Code, ConnectError } from "@connectrpc/connect";
import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import type { Platform } from "@herald/proto/common";
import { CredentialsError } from "./provider.js";

export type CredentialsResult<C> = { ok: true; credentials: C; fingerprint: string } | { ok: false; reason: string };

export type FetchCredentials = (appId: string, platform: Platform) => Promise<GetSendCredentialsResponse>;

interface Entry<C> {
  value: Promise<CredentialsResult<C>>;
  expiresAt: number;
}

/**
 * Decrypted credentials per app, kept in memory only, for ttlMs; concurrent batches of one
 * app share a single fetch. "Not configured" and unusable credentials are cached briefly
 * too, so a campaign to an unconfigured app fails fast instead of hammering the service.
 * Errors reaching the credential service are not cached: the caller retries the batch.
 */
export class CredentialsCache<C> {
  private readonly entries = new Map<string, Entry<C>>();

  constructor(
    private readonly fetch: FetchCredentials,
    private readonly prepare: (r: GetSendCredentialsResponse) => C | Promise<C>,
    private readonly platform: Platform,
    private readonly ttlMs = 60_000,
    private readonly negativeTtlMs = 5_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(appId: string): Promise<CredentialsResult<C>> {
    const hit = this.entries.get(appId);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    const value = this.load(appId);
    const entry: Entry<C> = { value, expiresAt: Number.POSITIVE_INFINITY };
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(appId, entry);
    value.then(
      (r) => (entry.expiresAt = this.now() + (r.ok ? this.ttlMs : this.negativeTtlMs)),
      () => this.entries.delete(appId),
    );
    return value;
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
