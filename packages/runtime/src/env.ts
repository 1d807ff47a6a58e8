/**
 * Environment parsing: each service declares its variables once and reads them with
 * `readEnv`, which reports every bad or missing variable in one error.
 */
export type EnvSpec<T> = {
  [K in keyof T]: EnvVar<T[K]>;
};

export interface EnvVar<V> {
  name: string;
  parse: (raw: string) => V;
  /** Used when the variable is unset or empty; absent means the variable is required. */
  default?: V;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join("; ")}`);
    this.name = "ConfigError";
  }
}

export function readEnv<T>(spec: EnvSpec<T>, env: NodeJS.ProcessEnv = process.env): T {
  const out = {} as T;
  const problems: string[] = [];
  for (const key of Object.keys(spec) as (keyof T)[]) {
    const v = spec[key];
    const raw = env[v.name];
    if (raw === undefined || raw === "") {
      if ("default" in v) out[key] = v.default as T[keyof T];
      else problems.push(`${v.name} is required`);
      continue;
    }
    try {
      out[key] = v.parse(raw);
    } catch (err) {
      problems.push(`${v.name}: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

export const str = (name: string, fallback?: string): EnvVar<string> =>
  fallback === undefined ? { name, parse: (s) => s } : { name, parse: (s) => s, default: fallback };

export const optionalStr = (name: string): EnvVar<string | undefined> => ({
  name,
  parse: (s) => s,
  default: undefined,
});

export const int = (name: string, fallback?: number, min = 0, max = Number.MAX_SAFE_INTEGER): EnvVar<number> => {
  const parse = (s: string) => {
    if (!/^-?\d+$/.test(s)) throw new Error(`must be an integer, got "${s.slice(0, 20)}"`);
    const n = Number(s);
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
    return n;
  };
  return fallback === undefined ? { name, parse } : { name, parse, default: fallback };
};

/** A comma-separated list: blanks around items and empty items are dropped; unset is []. */
export const list = (name: string): EnvVar<string[]> => ({
  name,
  default: [],
  parse: (s) =>
    s
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
});

export const port = (name: string, fallback: number): EnvVar<number> => int(name, fallback, 0, 65535);

export const bool = (name: string, fallback: boolean): EnvVar<boolean> => ({
  name,
  default: fallback,
  parse: (s) => {
    if (/^(1|true|yes)$/i.test(s)) return true;
    if (/^(0|false|no)$/i.test(s)) return false;
    throw new Error(`must be 1/0 or true/false`);
  },
});

export const url = (name: string, fallback?: string): EnvVar<string> => {
  const parse = (s: string) => {
    try {
      new URL(s);
    } catch {
      throw new Error("must be a URL");
    }
    return s;
  };
  return fallback === undefined ? { name, parse } : { name, parse, default: fallback };
};

/**
 * An https URL (TLS is never turned off), required unless the caller gives a default.
 * `"origin"`: answers the origin and refuses a path, query or fragment (e.g. a server to
 * talk to). `"base"`: refuses a query or fragment and answers the URL without trailing
 * slashes, so that paths are appended to it.
 */
export const httpsUrl = (name: string, form: "origin" | "base"): EnvVar<string> => ({
  name,
  parse: (s) => {
    const u = URL.parse(s);
    if (!u) throw new Error("must be a URL");
    if (u.protocol !== "https:") throw new Error("must be an https: URL (TLS is never turned off)");
    if (form === "origin" && (u.pathname !== "/" || u.search || u.hash)) {
      throw new Error("must be an origin without a path, query or fragment, e.g. https://127.0.0.1:4443");
    }
    if (u.search || u.hash) throw new Error("must not have a query or fragment");
    return form === "origin" ? u.origin : u.href.replace(/\/+$/, "");
  },
});

/** 32 random bytes, base64: the key that encrypts credentials at rest. */
export const masterKey = (name: string): EnvVar<Buffer> => ({
  name,
  parse: (s) => {
    const buf = Buffer.from(s, "base64");
    if (buf.length !== 32) throw new Error("must be 32 bytes, base64-encoded");
    return buf;
  },
});

export const logLevel = (name = "LOG_LEVEL"): EnvVar<string> => ({
  name,
  default: "info",
  parse: (s) => {
    if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(s)) {
      throw new Error("must be one of fatal, error, warn, info, debug, trace, silent");
    }
    return s;
  },
});

/** The variables every service shares. */
export const commonEnv = {
  logLevel: logLevel(),
  databaseUrl: url("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/herald"),
  /** One server, or every server of a cluster: comma-separated (packages/runtime/src/nats.ts). */
  natsUrl: str("NATS_URL", "nats://127.0.0.1:4222"),
  natsNamespace: str("NATS_NAMESPACE", ""),
  /**
   * Replicas of every stream Herald creates (streams.ts, StreamReplication): 1 for a single
   * server, 3 on a NATS cluster of three or more. JetStream allows at most 5.
   */
  natsStreamReplicas: int("NATS_STREAM_REPLICAS", 1, 1, 5),
  /** Placement tags of every stream (servers' `server_tags`); none by default. */
  natsPlacementTags: list("NATS_STREAM_PLACEMENT_TAGS"),
};
