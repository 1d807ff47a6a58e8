import { int, logLevel, optionalStr, port, str, url, type EnvVar } from "@herald/runtime";

/** "*" or a comma-separated list of origins allowed by CORS. */
const corsOrigins = (name: string): EnvVar<"*" | string[]> => ({
  name,
  default: "*",
  parse: (s) => {
    if (s.trim() === "*") return "*";
    const origins = s
      .split(",")
      .map((o) => o.trim())
      .filter((o) => o.length > 0);
    for (const o of origins) {
      if (!/^https?:\/\/[^/\s]+$/.test(o)) throw new Error("each origin must look like https://admin.example.com");
    }
    if (origins.length === 0) throw new Error('must be "*" or a comma-separated list of origins');
    return origins;
  },
});

const optionalUrl = (name: string): EnvVar<string | undefined> => ({
  name,
  default: undefined,
  parse: (s) => url(name).parse(s),
});

export const configSpec = {
  logLevel: logLevel(),
  port: port("PORT", 8080),
  host: str("HOST", "0.0.0.0"),
  credentialUrl: url("CREDENTIAL_URL", "http://127.0.0.1:7003"),
  deviceRegistryUrl: url("DEVICE_REGISTRY_URL", "http://127.0.0.1:7001"),
  campaignUrl: url("CAMPAIGN_URL", "http://127.0.0.1:7002"),
  redisUrl: url("REDIS_URL", "redis://127.0.0.1:6379"),
  redisKeyPrefix: str("REDIS_KEY_PREFIX", "herald:"),
  /** Requests per minute of a key that has no limit of its own, and of session JWTs. */
  rateLimitPerMinute: int("HERALD_RATE_LIMIT_PER_MINUTE", 1000, 1, 1_000_000),
  /** Session JWTs are accepted only when both issuer and JWKS URL are set. */
  jwtIssuer: optionalStr("HERALD_JWT_ISSUER"),
  jwtJwksUrl: optionalUrl("HERALD_JWT_JWKS_URL"),
  jwtAudience: optionalStr("HERALD_JWT_AUDIENCE"),
  corsOrigins: corsOrigins("HERALD_CORS_ORIGINS"),
  bodyLimitBytes: int("HERALD_BODY_LIMIT_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
  /** How long a verified API key is trusted without asking the credential service again. */
  authCacheMs: int("HERALD_AUTH_CACHE_MS", 10_000, 0, 300_000),
};

export type Config = { [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never };
