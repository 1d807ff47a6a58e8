import { ConfigError, int, masterKey, type EnvVar } from "./env.js";
import { MAX_KEY_VERSION, type MasterKey, SealedBox } from "./sealed-box.js";

const MASTER_KEY_VAR = "HERALD_MASTER_KEY";
const MASTER_KEY_VERSION_VAR = "HERALD_MASTER_KEY_VERSION";
const PREVIOUS_KEYS_VAR = "HERALD_MASTER_KEYS_PREVIOUS";
/** 32 bytes in base64 or base64url, padded or not: what `openssl rand -base64 32` prints. */
const KEY_TEXT = /^[A-Za-z0-9+/_-]{43}=?$/;
const ENTRY = /^(\d{1,5}):(.*)$/s;

/**
 * Master keys that open but never seal, as comma-separated `<version>:<base64 key>`
 * entries: retired keys, whose rows the re-encryption job moves to the active key, and
 * during the first step of a rotation the next key (a higher version), so that every
 * replica can read it before any seals with it. Errors name entries by position and
 * version, never a key.
 */
export function parsePreviousMasterKeys(raw: string): MasterKey[] {
  const keys: MasterKey[] = [];
  const problems: string[] = [];
  for (const [i, text] of raw.split(",").entries()) {
    const entry = `entry ${i + 1}`;
    const match = ENTRY.exec(text.trim());
    if (!match) {
      problems.push(`${entry} must be <version>:<base64 key>`);
      continue;
    }
    const version = Number(match[1]);
    const keyText = match[2]!.trim();
    // Node's base64 decoder also takes the URL-safe alphabet.
    const key = Buffer.from(keyText, "base64");
    if (version < 1 || version > MAX_KEY_VERSION) {
      problems.push(`${entry}: the version must be an integer from 1 to ${MAX_KEY_VERSION}`);
    } else if (!KEY_TEXT.test(keyText) || key.length !== 32) {
      problems.push(`${entry} (version ${version}): the key must be 32 bytes, base64-encoded`);
    } else if (keys.some((k) => k.version === version)) {
      problems.push(`${entry}: version ${version} is listed twice`);
    } else {
      keys.push({ version, key });
    }
  }
  if (problems.length > 0) throw new Error(problems.join("; "));
  return keys;
}

const previousMasterKeys: EnvVar<readonly MasterKey[]> = {
  name: PREVIOUS_KEYS_VAR,
  default: [],
  parse: parsePreviousMasterKeys,
};

/** The master key variables of every service that seals (credential, webhooks). */
export const masterKeyEnv = {
  /** The active master key: seals everything new. */
  masterKey: masterKey(MASTER_KEY_VAR),
  /** Stored beside every blob the active key seals; a new key needs a new version. */
  masterKeyVersion: int(MASTER_KEY_VERSION_VAR, 1, 1, MAX_KEY_VERSION),
  previousMasterKeys,
};

/**
 * The sealed box of the configured master keys: the active one seals, every one opens what
 * it sealed. Contradictions between the variables are a ConfigError naming them, never a key.
 */
export function sealedBoxOf(config: {
  masterKey: Buffer;
  masterKeyVersion?: number;
  previousMasterKeys?: readonly MasterKey[];
}): SealedBox {
  const active = config.masterKeyVersion ?? masterKeyEnv.masterKeyVersion.default!;
  const previous = config.previousMasterKeys ?? [];
  const problems: string[] = [];
  if (config.masterKey.length !== 32) problems.push(`${MASTER_KEY_VAR}: must be 32 bytes, base64-encoded`);
  if (!Number.isInteger(active) || active < 1 || active > MAX_KEY_VERSION) {
    problems.push(`${MASTER_KEY_VERSION_VAR}: must be between 1 and ${MAX_KEY_VERSION}`);
  }
  const seen: MasterKey[] = [{ version: active, key: config.masterKey }];
  for (const { version, key } of previous) {
    if (version === active) {
      problems.push(
        `${PREVIOUS_KEYS_VAR}: version ${version} is the active ${MASTER_KEY_VERSION_VAR}; list the other keys only`,
      );
      continue;
    }
    const same = seen.find((k) => k.key.equals(key));
    if (same) {
      problems.push(
        `${PREVIOUS_KEYS_VAR}: version ${version} has the same key as version ${same.version}; a new version needs a new key`,
      );
    }
    seen.push({ version, key });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  try {
    return new SealedBox(config.masterKey, active, previous);
  } catch (err) {
    throw new ConfigError([`${PREVIOUS_KEYS_VAR}: ${(err as Error).message}`]);
  }
}
