import { sign } from "node:crypto";
import { BoundedCache } from "@herald/runtime";
import type { ServiceAccount } from "./service-account.js";

export const FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ASSERTION_LIFETIME_S = 3600;

export interface TokenEndpointResponse {
  status: number;
  body: string;
}

/** POSTs an url-encoded form to a token_uri; the production one is `httpsTokenEndpoint`. */
export type TokenEndpoint = (tokenUri: string, form: string) => Promise<TokenEndpointResponse>;

/** The token endpoint refused the account (revoked or deleted key, unknown client): retrying cannot help. */
export class OAuthRejectedError extends Error {
  override name = "OAuthRejectedError";
  constructor(
    readonly error: string,
    readonly description: string | undefined,
  ) {
    super(description ? `${error}: ${description}` : error);
  }
}

/** The token endpoint could not be reached or answered 5xx/429: try again later. */
export class OAuthUnavailableError extends Error {
  override name = "OAuthUnavailableError";
}

interface Token {
  value: string;
  refreshAt: number;
  expiresAt: number;
}

/** What is known of an account: a token, or that the endpoint refused it a moment ago. */
type Held = { token: Token } | { rejected: OAuthRejectedError };

/** A token past refreshAt stays usable this long before its expiry, should its refresh fail. */
const USABLE_UNTIL_MS_BEFORE_EXPIRY = 30_000;

export interface OAuthTokenSourceOptions {
  now?: () => number;
  /** Fetch a new token this long before the current one expires (default 5 min). */
  refreshBeforeMs?: number;
  /** A rejection is remembered this long, so a batch to a revoked account asks once, not per device. */
  rejectionTtlMs?: number;
  maxEntries?: number;
}

/**
 * OAuth 2 access tokens for service accounts (JWT-bearer grant, RS256 assertion), one
 * per account key, cached until `refreshBeforeMs` before expiry. Concurrent callers
 * share one fetch: a burst of sends never fetches more than one token.
 */
export class OAuthTokenSource {
  private readonly held: BoundedCache<Held>;
  private readonly now: () => number;
  private readonly refreshBeforeMs: number;

  constructor(
    private readonly endpoint: TokenEndpoint,
    opts: OAuthTokenSourceOptions = {},
  ) {
    const now = opts.now ?? Date.now;
    const rejectionTtlMs = opts.rejectionTtlMs ?? 30_000;
    this.now = now;
    this.refreshBeforeMs = opts.refreshBeforeMs ?? 5 * 60_000;
    this.held = new BoundedCache<Held>({
      maxEntries: opts.maxEntries ?? 10_000,
      // A token is kept while it is fresh or still usable should its refresh fail.
      ttlMs: (h) =>
        "token" in h
          ? Math.max(h.token.refreshAt, h.token.expiresAt - USABLE_UNTIL_MS_BEFORE_EXPIRY) - now()
          : rejectionTtlMs,
      now,
    });
  }

  /** A valid access token; throws OAuthRejectedError or OAuthUnavailableError. */
  async accessToken(account: ServiceAccount): Promise<string> {
    const key = cacheKey(account);
    const held = this.held.peek(key);
    if (held && "token" in held && this.now() < held.token.refreshAt) return held.token.value;
    if (held && "rejected" in held) throw held.rejected;
    const stale = held && "token" in held ? held.token : undefined;
    const next = await this.held.refresh(key, () => this.fetch(account, stale));
    if ("rejected" in next) throw next.rejected;
    return next.token.value;
  }

  /** FCM refused `token`: forget it (unless a newer one replaced it already). */
  invalidate(account: ServiceAccount, token: string): void {
    const key = cacheKey(account);
    const held = this.held.peek(key);
    if (held && "token" in held && held.token.value === token) this.held.delete(key);
  }

  private async fetch(account: ServiceAccount, stale: Token | undefined): Promise<Held> {
    try {
      return { token: await this.request(account, this.now()) };
    } catch (err) {
      if (err instanceof OAuthRejectedError) return { rejected: err };
      // The endpoint is down but the token we hold has minutes left: keep using it.
      if (stale && this.now() < stale.expiresAt - USABLE_UNTIL_MS_BEFORE_EXPIRY) return { token: stale };
      throw err instanceof OAuthUnavailableError ? err : new OAuthUnavailableError(describe(err), { cause: err });
    }
  }

  private async request(account: ServiceAccount, nowMs: number): Promise<Token> {
    const form = new URLSearchParams({ grant_type: JWT_BEARER, assertion: assertion(account, nowMs) }).toString();
    const res = await this.endpoint(account.tokenUri, form);
    const doc = parseJson(res.body);
    if (res.status === 200) {
      const value = doc?.access_token;
      if (typeof value !== "string" || !value)
        throw new OAuthUnavailableError("token endpoint answered without an access_token");
      const lifetimeMs = (typeof doc?.expires_in === "number" && doc.expires_in > 0 ? doc.expires_in : 3600) * 1000;
      // A short-lived token is renewed halfway through rather than never cached.
      const refreshAfterMs = Math.max(lifetimeMs - this.refreshBeforeMs, lifetimeMs / 2);
      return { value, refreshAt: nowMs + refreshAfterMs, expiresAt: nowMs + lifetimeMs };
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      const error = typeof doc?.error === "string" ? doc.error : `HTTP_${res.status}`;
      const description = typeof doc?.error_description === "string" ? doc.error_description.slice(0, 200) : undefined;
      throw new OAuthRejectedError(error, description);
    }
    throw new OAuthUnavailableError(`token endpoint answered ${res.status}`);
  }
}

/** The signed JWT of the JWT-bearer grant (RFC 7523) as Google specifies it for service accounts. */
export function assertion(account: ServiceAccount, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: "RS256", typ: "JWT", ...(account.privateKeyId ? { kid: account.privateKeyId } : {}) };
  const claims = {
    iss: account.clientEmail,
    scope: FCM_SCOPE,
    aud: account.tokenUri,
    iat,
    exp: iat + ASSERTION_LIFETIME_S,
  };
  const input = `${b64url(header)}.${b64url(claims)}`;
  return `${input}.${sign("sha256", Buffer.from(input), account.privateKey).toString("base64url")}`;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

const cacheKey = (a: ServiceAccount) => `${a.clientEmail}\n${a.tokenUri}\n${a.keyId}`;

function parseJson(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describe(err: unknown): string {
  const code = (err as { code?: string }).code;
  return `token endpoint unreachable${code ? ` (${code})` : ""}`;
}
