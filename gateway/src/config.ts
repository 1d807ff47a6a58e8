import { bool, int, logLevel, optionalStr, port, str, url, type EnvVar } from "@herald/runtime";

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

/** The gateway's public origin (scheme, host, port; no path, no trailing slash). */
const publicUrl = (name: string, fallback: string): EnvVar<string> => ({
  name,
  default: fallback,
  parse: (s) => {
    const parsed = URL.parse(s.trim());
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password)
      throw new Error("must be an http(s) URL like https://herald.example.com");
    if (parsed.pathname !== "/" || parsed.search || parsed.hash)
      throw new Error("must be an origin without a path, e.g. https://herald.example.com");
    return parsed.origin;
  },
});

export const configSpec = {
  logLevel: logLevel(),
  port: port("PORT", 8080),
  host: str("HOST", "0.0.0.0"),
  credentialUrl: url("CREDENTIAL_URL", "http://127.0.0.1:7003"),
  deviceRegistryUrl: url("DEVICE_REGISTRY_URL", "http://127.0.0.1:7001"),
  campaignUrl: url("CAMPAIGN_URL", "http://127.0.0.1:7002"),
  webhooksUrl: url("WEBHOOKS_URL", "http://127.0.0.1:7004"),
  redisUrl: url("REDIS_URL", "redis://127.0.0.1:6379"),
  redisKeyPrefix: str("REDIS_KEY_PREFIX", "herald:"),
  /** Requests per minute of a key that has no limit of its own, and of session JWTs. */
  rateLimitPerMinute: int("HERALD_RATE_LIMIT_PER_MINUTE", 1000, 1, 1_000_000),
  /** Session JWTs are accepted only when both issuer and JWKS URL are set. */
  jwtIssuer: optionalStr("HERALD_JWT_ISSUER"),
  jwtJwksUrl: optionalUrl("HERALD_JWT_JWKS_URL"),
  jwtAudience: optionalStr("HERALD_JWT_AUDIENCE"),
  /**
   * Where browsers and OAuth clients reach the gateway: the issuer of session tokens, the
   * origin of the sign-in page and the console.
   */
  publicUrl: publicUrl("HERALD_PUBLIC_URL", "http://127.0.0.1:8080"),
  /** Lifetime of the access tokens the gateway's OAuth server issues (at most 1 h). */
  accessTokenTtlSeconds: int("HERALD_ACCESS_TOKEN_TTL_SECONDS", 900, 60, 3600),
  /**
   * Behind a reverse proxy (the chart's ingress): the client address of the sign-in
   * throttle is the last X-Forwarded-For hop instead of the socket's peer.
   */
  trustProxy: bool("HERALD_TRUST_PROXY", false),
  corsOrigins: corsOrigins("HERALD_CORS_ORIGINS"),
  bodyLimitBytes: int("HERALD_BODY_LIMIT_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
  /** How long a verified API key is trusted without asking the credential service again. */
  authCacheMs: int("HERALD_AUTH_CACHE_MS", 10_000, 0, 300_000),
};

export type Config = { [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never };
