import { commonEnv, ConfigError, int, masterKey, port, str, type EnvVar } from "@herald/runtime";
import { SECRET_PATTERN } from "./api-key-secret.js";
import { EMAIL_RULE, normaliseEmail, passwordProblem } from "./password-policy.js";
import { MAX_KEY_VERSION, type MasterKey, SealedBox } from "./sealed-box.js";

const BOOTSTRAP_KEY_VAR = "HERALD_BOOTSTRAP_API_KEY";
const BOOTSTRAP_KEY_RULE = "must be hk_live_ followed by 32 to 256 letters or digits";

/** Optional org-scoped key ensured at start-up. Its value is never part of an error. */
const bootstrapApiKey: EnvVar<string | undefined> = {
  name: BOOTSTRAP_KEY_VAR,
  default: undefined,
  parse: (s) => {
    if (!SECRET_PATTERN.test(s)) throw new Error(BOOTSTRAP_KEY_RULE);
    return s;
  },
};

const ADMIN_EMAIL_VAR = "HERALD_BOOTSTRAP_ADMIN_EMAIL";
const ADMIN_PASSWORD_VAR = "HERALD_BOOTSTRAP_ADMIN_PASSWORD";

/** The owner ensured at start-up (bootstrap.ts). Neither value is ever part of an error. */
const bootstrapAdminEmail: EnvVar<string | undefined> = {
  name: ADMIN_EMAIL_VAR,
  default: undefined,
  parse: (s) => {
    const email = normaliseEmail(s);
    if (email === undefined) throw new Error(EMAIL_RULE);
    return email;
  },
};
const bootstrapAdminPassword: EnvVar<string | undefined> = {
  name: ADMIN_PASSWORD_VAR,
  default: undefined,
  parse: (s) => {
    const problem = passwordProblem(s);
    if (problem) throw new Error(problem);
    return s;
  },
};

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

export const configSpec = {
  ...commonEnv,
  port: port("PORT", 7003),
  adminPort: port("ADMIN_PORT", 7103),
  schema: str("DB_SCHEMA", "credential"),
  /** The active master key: seals everything new. */
  masterKey: masterKey(MASTER_KEY_VAR),
  /** Stored beside every blob the active key seals; a new key needs a new version. */
  masterKeyVersion: int(MASTER_KEY_VERSION_VAR, 1, 1, MAX_KEY_VERSION),
  previousMasterKeys,
  bootstrapApiKey,
  defaultRateLimit: int("HERALD_DEFAULT_RATE_LIMIT", 1000, 1, 1_000_000),
  // Client keys ship inside apps, so anyone may use them: a lower default per key.
  clientKeyRateLimit: int("HERALD_CLIENT_KEY_RATE_LIMIT", 120, 1, 1_000_000),
  bootstrapAdminEmail,
  bootstrapAdminPassword,
  signingKeyRotationDays: int("HERALD_SIGNING_KEY_ROTATION_DAYS", 30, 1, 3650),
  // Must outlast every token a retired key signed; access tokens live at most an hour.
  signingKeyRetentionHours: int("HERALD_SIGNING_KEY_RETENTION_HOURS", 24, 2, 8760),
};

type ParsedConfig = {
  [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never;
};
/** Settings that start() defaults, so that a config built by hand (tests) may leave them out. */
type Defaulted =
  | "masterKeyVersion"
  | "previousMasterKeys"
  | "clientKeyRateLimit"
  | "bootstrapAdminEmail"
  | "bootstrapAdminPassword"
  | "signingKeyRotationDays"
  | "signingKeyRetentionHours";
export type Config = Omit<ParsedConfig, Defaulted> & Partial<Pick<ParsedConfig, Defaulted>>;

/** start() gets its config from tests and dev mode too, so it re-checks what the env parser checks. */
export function checkBootstrapKey(config: Pick<Config, "bootstrapApiKey">): void {
  if (config.bootstrapApiKey !== undefined && !SECRET_PATTERN.test(config.bootstrapApiKey)) {
    throw new ConfigError([`${BOOTSTRAP_KEY_VAR}: ${BOOTSTRAP_KEY_RULE}`]);
  }
}

/** Both bootstrap admin variables or neither, each valid; the values never reach the message. */
export function checkBootstrapAdmin(config: Pick<Config, "bootstrapAdminEmail" | "bootstrapAdminPassword">): void {
  const { bootstrapAdminEmail: email, bootstrapAdminPassword: password } = config;
  const problems: string[] = [];
  if ((email === undefined) !== (password === undefined)) {
    problems.push(`${ADMIN_EMAIL_VAR} and ${ADMIN_PASSWORD_VAR} must be set together`);
  }
  if (email !== undefined && normaliseEmail(email) === undefined) problems.push(`${ADMIN_EMAIL_VAR}: ${EMAIL_RULE}`);
  const problem = password === undefined ? undefined : passwordProblem(password);
  if (problem) problems.push(`${ADMIN_PASSWORD_VAR}: ${problem}`);
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * The sealed box of the configured master keys: the active one seals, every one opens what
 * it sealed. Contradictions between the variables are a ConfigError naming them, never a key.
 */
export function sealedBoxOf(config: Pick<Config, "masterKey" | "masterKeyVersion" | "previousMasterKeys">): SealedBox {
  const active = config.masterKeyVersion ?? configSpec.masterKeyVersion.default!;
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
