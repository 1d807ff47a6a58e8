import { createPublicKey, type KeyObject } from "node:crypto";
import { InputError } from "../errors.js";
import { isTopic } from "./request-headers.js";

/** A provider authentication key as Apple holds it: its team, its key id and the app topics the team owns. */
export interface ApnsKey {
  teamId: string;
  keyId: string;
  topics: ReadonlySet<string>;
  publicKey: KeyObject;
}

export interface ApnsKeyView {
  team_id: string;
  key_id: string;
  topics: string[];
}

/** Apple's team ids and key ids: ten uppercase letters or digits. */
const APPLE_ID = /^[A-Z0-9]{10}$/;

/** Keys registered through the admin API, by key id (the JWT's `kid`). */
export class ApnsKeyStore {
  private readonly keys = new Map<string, ApnsKey>();

  /**
   * `{team_id, key_id, topics, public_key_pem | p8}`: the p8 (PKCS#8 private key PEM, as
   * downloaded from Apple) is reduced to its public half at once and never kept.
   * Registering a key id again replaces the key.
   */
  register(body: unknown): ApnsKeyView {
    const input = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    const { team_id: teamId, key_id: keyId, topics, public_key_pem: publicPem, p8 } = input;
    if (typeof teamId !== "string" || !APPLE_ID.test(teamId))
      throw new InputError("team_id must be 10 uppercase letters or digits");
    if (typeof keyId !== "string" || !APPLE_ID.test(keyId))
      throw new InputError("key_id must be 10 uppercase letters or digits");
    if (!Array.isArray(topics) || topics.length === 0 || !topics.every(isTopic)) {
      throw new InputError("topics must be a non-empty list of bundle ids");
    }
    if ((publicPem === undefined) === (p8 === undefined))
      throw new InputError("give exactly one of public_key_pem and p8");
    const pem = publicPem ?? p8;
    if (typeof pem !== "string") throw new InputError("the key must be PEM text");
    let publicKey: KeyObject;
    try {
      publicKey = createPublicKey(pem);
    } catch {
      throw new InputError("the key must be a PEM P-256 public key or a .p8 private key");
    }
    if (publicKey.asymmetricKeyType !== "ec" || publicKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
      throw new InputError("the key must be a P-256 (ES256) key");
    }
    const key: ApnsKey = { teamId, keyId, topics: new Set(topics), publicKey };
    this.keys.set(keyId, key);
    return view(key);
  }

  /** A revoked key's tokens are refused InvalidProviderToken from now on. */
  revoke(keyId: string): boolean {
    return this.keys.delete(keyId);
  }

  get(keyId: string): ApnsKey | undefined {
    return this.keys.get(keyId);
  }
}

function view(key: ApnsKey): ApnsKeyView {
  return { team_id: key.teamId, key_id: key.keyId, topics: [...key.topics] };
}
