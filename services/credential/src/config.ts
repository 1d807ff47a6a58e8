import { commonEnv, ConfigError, int, masterKey, port, str, type EnvVar } from "@herald/runtime";
import { SECRET_PATTERN } from "./api-key-secret.js";

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

export const configSpec = {
  ...commonEnv,
  port: port("PORT", 7003),
  adminPort: port("ADMIN_PORT", 7103),
  schema: str("DB_SCHEMA", "credential"),
  masterKey: masterKey("HERALD_MASTER_KEY"),
  bootstrapApiKey,
  defaultRateLimit: int("HERALD_DEFAULT_RATE_LIMIT", 1000, 1, 1_000_000),
};

export type Config = { [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never };

/** start() gets its config from tests and dev mode too, so it re-checks what the env parser checks. */
export function checkBootstrapKey(config: Pick<Config, "bootstrapApiKey">): void {
  if (config.bootstrapApiKey !== undefined && !SECRET_PATTERN.test(config.bootstrapApiKey)) {
    throw new ConfigError([`${BOOTSTRAP_KEY_VAR}: ${BOOTSTRAP_KEY_RULE}`]);
  }
}
