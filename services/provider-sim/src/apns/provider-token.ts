import { compactVerify, decodeProtectedHeader } from "jose";
import { ok, refuse, type Checked } from "../refusal.js";
import type { ApnsKey, ApnsKeyStore } from "./keys.js";

/** Apple refuses a provider token whose `iat` is more than an hour old. */
export const MAX_TOKEN_AGE_S = 60 * 60;
/** An `iat` this far ahead of the simulator's clock is tolerated as skew; further ahead it is invalid. */
export const MAX_CLOCK_SKEW_S = 60;

export interface VerifiedToken {
  /** The JWT text: a connection's "token update" is a change of this string. */
  token: string;
  teamId: string;
  keyId: string;
  iat: number;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const invalid = () => refuse(403, "InvalidProviderToken");

/** `authorization: bearer <JWT>`; a missing header, another scheme or an empty token is MissingProviderToken. */
export function parseBearer(header: string | string[] | undefined): Checked<string> {
  if (typeof header !== "string") return refuse(403, "MissingProviderToken");
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header.trim());
  if (!m) return refuse(403, "MissingProviderToken");
  return ok(m[1]!);
}

interface Verified {
  key: ApnsKey;
  iat: number;
}

/**
 * Verifies provider tokens: ES256 signed by a registered key named in `kid`, `iss` its
 * team id, an integer `iat` no more than an hour old and no more than a minute ahead.
 * Signature checks (~0.5 ms each) are cached per token string, as a sender reuses one
 * token for up to an hour; the time rules are applied on every request.
 */
export class ProviderTokenVerifier {
  private cache = new Map<string, Verified>();

  constructor(
    private readonly keys: ApnsKeyStore,
    private readonly maxCached = 10_000,
  ) {}

  async verify(token: string, nowS: number): Promise<Checked<VerifiedToken>> {
    let verified = this.cache.get(token);
    // A revoked or replaced key invalidates what was verified with it.
    if (verified && this.keys.get(verified.key.keyId) !== verified.key) {
      this.cache.delete(token);
      verified = undefined;
    }
    if (!verified) {
      const checked = await this.verifySignature(token);
      if (!checked.ok) return checked;
      verified = checked.value;
      if (this.cache.size >= this.maxCached) this.cache.clear();
      this.cache.set(token, verified);
    }
    if (verified.iat > nowS + MAX_CLOCK_SKEW_S) return invalid();
    if (nowS - verified.iat > MAX_TOKEN_AGE_S) return refuse(403, "ExpiredProviderToken");
    return ok({ token, teamId: verified.key.teamId, keyId: verified.key.keyId, iat: verified.iat });
  }

  private async verifySignature(token: string): Promise<Checked<Verified>> {
    if (!COMPACT_JWS.test(token)) return invalid();
    let kid: unknown;
    let alg: unknown;
    try {
      ({ kid, alg } = decodeProtectedHeader(token));
    } catch {
      return invalid();
    }
    if (alg !== "ES256" || typeof kid !== "string") return invalid();
    const key = this.keys.get(kid);
    if (!key) return invalid();
    let claims: unknown;
    try {
      const { payload } = await compactVerify(token, key.publicKey, { algorithms: ["ES256"] });
      claims = JSON.parse(new TextDecoder().decode(payload));
    } catch {
      return invalid();
    }
    if (typeof claims !== "object" || claims === null) return invalid();
    const { iss, iat } = claims as Record<string, unknown>;
    if (iss !== key.teamId || typeof iat !== "number" || !Number.isSafeInteger(iat)) return invalid();
    return ok({ key, iat });
  }
}
