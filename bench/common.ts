import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { DEFAULT_URLS } from "../test/support/infra-urls.js";

// What every benchmark scenario shares: the command line, medians, the bench database and
// the results folder.

const args = process.argv.slice(2);
export const flag = (name: string) => args.includes(`--${name}`);
export const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
export const text = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
export const QUICK = flag("quick");
/**
 * How far away the push sink answers (bench/push-sink.ts: ± 10 % jitter), in ms: real
 * providers answer from 20 to 300 ms away. 0: at once.
 */
export const LATENCY_MS = option("latency", 0);
/** SETTINGS_MAX_CONCURRENT_STREAMS the sinks advertise: 500, as APNs has been seen to. */
export const MAX_STREAMS = option("max-streams", 500);
export const ROUNDS = option("rounds", QUICK ? 1 : 3);
export const root = path.resolve(import.meta.dirname, "..");
/** The Herald processes' output, a folder per stack (bench/herald-stack.ts); `.herald/` is not committed. */
export const LOG_DIR = path.join(root, ".herald", "bench-logs", new Date().toISOString().replace(/[:.]/g, "-"));

export const CORES = os.cpus().length;
/** The rate at which work costing `cpuSeconds` of CPU per `per` units would fill every core. */
export const cpuBound = (cpuSeconds: number, per: number) => (CORES * per) / cpuSeconds;

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function freshDatabase(name: string): Promise<string> {
  const at = (db: string) => {
    const url = new URL(DEFAULT_URLS.databaseUrl);
    url.pathname = `/${db}`;
    return url.toString();
  };
  // The maintenance database: the test database may not exist yet on a fresh machine.
  const client = new pg.Client({ connectionString: at("postgres") });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  return at(name);
}

export function writeResult(name: string, json: unknown, table: string) {
  const dir = path.join(root, "bench/results");
  mkdirSync(dir, { recursive: true });
  const file = `${new Date().toISOString().slice(0, 10)}-${name}`;
  writeFileSync(path.join(dir, `${file}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(path.join(dir, `${file}.md`), `${table}\n`);
  console.log(`results: bench/results/${file}.{json,md}; the processes' output: ${path.relative(root, LOG_DIR)}/`);
}
