import { appendFileSync } from "node:fs";

/**
 * The knobs of the fuzz suites (gateway/test/fuzz.int.test.ts and the senders'
 * *-fuzz.int.test.ts). `npm test` runs the short profile: a fixed seed and small run
 * counts, so a failure there reproduces on every machine. `npm run fuzz`
 * (scripts/fuzz.mjs) runs the long profile: it sets HERALD_FUZZ_SEED (random unless
 * given), HERALD_FUZZ_SCALE (run counts multiplied by it) and HERALD_FUZZ_REPORT (a file
 * the suites append their figures to, for the report it writes).
 */

/** The short profile's seed: any fixed value, so `npm test` always fuzzes the same inputs. */
const DEFAULT_SEED = 20_261_121;

function envNumber(name: string, fallback: number, valid: (n: number) => boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!valid(n)) throw new Error(`${name} must be a number in range, got "${raw.slice(0, 20)}"`);
  return n;
}

/** fast-check seeds are 32-bit integers. */
export const FUZZ_SEED = envNumber(
  "HERALD_FUZZ_SEED",
  DEFAULT_SEED,
  (n) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
);

export const FUZZ_SCALE = envNumber("HERALD_FUZZ_SCALE", 1, (n) => n > 0 && n <= 10_000);

/** The number of runs of a property: its short-profile count, scaled in the long profile. */
export const fuzzRuns = (short: number): number => Math.max(1, Math.round(short * FUZZ_SCALE));

/** A test's timeout: its short-profile budget, scaled like its runs. */
export const fuzzTimeout = (shortMs: number): number => Math.round(shortMs * Math.max(1, FUZZ_SCALE));

/** fast-check's parameters for a property run `short` times in the short profile. */
export const fuzzParams = (short: number) => ({ seed: FUZZ_SEED, numRuns: fuzzRuns(short) });

/**
 * Prints a suite's figures (`fuzz <suite>: seed …, 1200 requests, 0 5xx`) and appends them
 * to the long profile's report file.
 */
export function reportFigures(suite: string, figures: Record<string, number | string>): void {
  const text = Object.entries(figures)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
  console.log(`fuzz ${suite}: seed ${FUZZ_SEED}, scale ${FUZZ_SCALE}: ${text}`);
  const file = process.env.HERALD_FUZZ_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify({ suite, seed: FUZZ_SEED, scale: FUZZ_SCALE, figures })}\n`);
}
