import { commonEnv, ConfigError, int, masterKeyEnv, port, str, type EnvVar } from "@herald/runtime";
import { SECRET_PATTERN } from "./api-key-secret.js";
import { EMAIL_RULE, normaliseEmail, passwordProblem } from "./password-policy.js";

/** Moved to the runtime (the webhooks service seals with the same keys); re-exported for callers here. */
export { parsePreviousMasterKeys, sealedBoxOf } from "@herald/runtime";

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

export const configSpec = {
  ...commonEnv,
  port: port("PORT", 7003),
  adminPort: port("ADMIN_PORT", 7103),
  schema: str("DB_SCHEMA", "credential"),
  ...masterKeyEnv,
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
  | "signingKeyRetentionHours"
  | "natsStreamReplicas"
  | "natsPlacementTags";
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
