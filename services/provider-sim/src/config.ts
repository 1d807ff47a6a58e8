import path from "node:path";
import { fileURLToPath } from "node:url";
import { int, logLevel, port, str, type EnvVar } from "@herald/runtime";

/** `<repo>/.herald/sim-ca`: the same place for dev mode, `npm test` and every process that trusts it. */
export const DEFAULT_CERT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../.herald/sim-ca");

/**
 * The origin endpoints are issued under, and the only VAPID `aud` the simulator accepts.
 * An origin, not a URL with a path: the push routes live at the root.
 */
const publicUrl: EnvVar<string | undefined> = {
  name: "SIM_PUBLIC_URL",
  default: undefined,
  parse: (s) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new Error("must be a URL");
    }
    if (u.protocol !== "https:") throw new Error("must be an https: URL");
    if (u.pathname !== "/" || u.search || u.hash) throw new Error("must be an origin (no path, query or fragment)");
    return u.origin;
  },
};

/** Extra names for the server certificate (e.g. a Kubernetes service name), beside localhost and loopback. */
const certHosts: EnvVar<string[]> = {
  name: "SIM_CERT_HOSTS",
  default: [],
  parse: (s) => s.split(",").map((h) => h.trim()).filter((h) => h.length > 0),
};

/** Seed of the fault-decision PRNG; unset means a random seed (logged, so a run can be replayed). */
const seed: EnvVar<number | undefined> = { ...int("SIM_SEED", 0, 0, 0xffff_ffff), default: undefined };

export const certSpec = {
  certDir: str("SIM_CERT_DIR", DEFAULT_CERT_DIR),
  certHosts,
};

export const configSpec = {
  logLevel: logLevel(),
  port: port("PORT", 4443),
  adminPort: port("ADMIN_PORT", 4444),
  ...certSpec,
  publicUrl,
  seed,
  /** Deliveries kept for queries; counts stay exact beyond it. */
  maxRecorded: int("SIM_MAX_RECORDED", 200_000, 1, 10_000_000),
};

export type Config = { [K in keyof typeof configSpec]: (typeof configSpec)[K] extends EnvVar<infer V> ? V : never };
