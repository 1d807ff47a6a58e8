import { hkdfSync } from "node:crypto";
import type { JWK } from "jose";
import type { IdentityClient } from "../backends.js";

/** One signing key as the gateway uses it: the private JWK (ES256) and its public half. */
export interface SigningKey {
  kid: string;
  active: boolean;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** A snapshot of the key set; `version` changes whenever a key appears or goes. */
export interface KeySet {
  version: string;
  /** The active key first: oidc-provider signs with the first key that fits. */
  keys: SigningKey[];
}

/** Members a public JWK may carry; anything else (d, p, q, dp, dq, qi, k, oth) is private. */
const PUBLIC_MEMBERS = ["kty", "crv", "x", "y", "n", "e", "alg", "use", "kid"] as const;

export function publicPart(jwk: JWK): JWK {
  const out: JWK = {};
  for (const member of PUBLIC_MEMBERS) if (jwk[member] !== undefined) out[member] = jwk[member];
  return out;
}

/**
 * Keys for signing the OAuth server's cookies, derived (HKDF-SHA256) from the signing
 * keys' private material: every replica computes the same ones with nothing more to
 * configure, and a master-key rotation (new signing keys) rotates them too. All keys are
 * returned, the active one first, so cookies signed before a rotation still verify.
 */
export function cookieKeys(set: KeySet): Buffer[] {
  return set.keys.map((key) => {
    const secret = key.privateJwk.d;
    if (!secret) throw new Error(`signing key ${key.kid} has no private part`);
    return Buffer.from(hkdfSync("sha256", Buffer.from(secret, "base64url"), "herald-oauth", `cookies:${key.kid}`, 32));
  });
}

export interface SigningKeysOptions {
  /** How often the set is re-read, so every replica soon follows a rotation. */
  refreshMs?: number;
  /** The least time between two re-reads caused by an unknown kid. */
  unknownKidCooldownMs?: number;
  now?: () => number;
}

/**
 * The token signing keys, read from IdentityService.GetSigningKeys and kept in memory.
 * The set is re-read once it is older than `refreshMs`, and sooner when a token names a
 * kid we have not seen (another replica saw a rotation first), at most once per cooldown.
 * Retired keys stay in the set as long as the service returns them.
 */
export class SigningKeys {
  private current: KeySet | undefined;
  private loadedAt = 0;
  private lastUnknownKidLoad = Number.NEGATIVE_INFINITY;
  private loading: Promise<KeySet> | undefined;
  private readonly refreshMs: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(
    private readonly identity: IdentityClient,
    opts: SigningKeysOptions = {},
  ) {
    this.refreshMs = opts.refreshMs ?? 60_000;
    this.cooldownMs = opts.unknownKidCooldownMs ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** The current set; re-read when stale (a failed re-read keeps serving the old set). */
  async get(): Promise<KeySet> {
    if (!this.current) return this.load();
    if (this.now() - this.loadedAt >= this.refreshMs) {
      void this.load().catch(() => undefined);
    }
    return this.current;
  }

  /** The set after a re-read if `kid` is unknown and the cooldown allows one. */
  async withKid(kid: string): Promise<KeySet> {
    const set = await this.get();
    if (set.keys.some((k) => k.kid === kid)) return set;
    if (this.now() - this.lastUnknownKidLoad < this.cooldownMs) return set;
    this.lastUnknownKidLoad = this.now();
    return this.load();
  }

  private load(): Promise<KeySet> {
    this.loading ??= this.fetch().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async fetch(): Promise<KeySet> {
    const { keys } = await this.identity.getSigningKeys({});
    const parsed = keys.map((k): SigningKey => {
      const privateJwk = { ...(JSON.parse(k.privateJwk) as JWK), kid: k.kid, alg: "ES256", use: "sig" };
      return { kid: k.kid, active: k.active, privateJwk, publicJwk: publicPart(privateJwk) };
    });
    if (!parsed.some((k) => k.active)) throw new Error("IdentityService returned no active signing key");
    parsed.sort((a, b) => Number(b.active) - Number(a.active));
    const set: KeySet = { version: parsed.map((k) => k.kid).join(","), keys: parsed };
    this.current = set;
    this.loadedAt = this.now();
    return set;
  }
}
