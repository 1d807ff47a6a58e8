import { bool, commonEnv, port, str, type EnvVar } from "@herald/runtime";

/** A comma-separated list; unset or empty means no list. */
const hostList = (name: string): EnvVar<string[] | undefined> => ({
  name,
  default: undefined,
  parse: (raw) => {
    const hosts = raw
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    return hosts.length > 0 ? hosts : undefined;
  },
});

export const configSpec = {
  ...commonEnv,
  port: port("PORT", 7001),
  adminPort: port("ADMIN_PORT", 7101),
  schema: str("DB_SCHEMA", "device_registry"),
  /** Dev mode and tests: web push endpoints may be http and point at private addresses. */
  webPushAllowPrivate: bool("HERALD_WEBPUSH_ALLOW_PRIVATE", false),
  /** When set, web push endpoints must be on one of these push service hosts. */
  webPushAllowedHosts: hostList("HERALD_WEBPUSH_ALLOWED_HOSTS"),
};

export type Config = {
  [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never;
};
