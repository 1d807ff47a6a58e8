#!/usr/bin/env node
// `npm run fuzz`: the long profile of the fuzz suites — the REST fuzzing from the
// gateway's OpenAPI document and the fuzzing of what parses provider answers. `npm test`
// runs the same files with a fixed seed and small run counts; this runs them with a
// random seed (or the one given) and `--scale` times as many runs, prints the seed first
// so that any failure can be replayed, and appends the figures every suite reports to
// fuzz/results/<YYYY-MM-DD>.md.
//
//   npm run fuzz                          random seed, scale 20
//   npm run fuzz -- --seed 1234 --scale 50
//   HERALD_FUZZ_SEED=1234 npm run fuzz    the same, as the suites read it
import { spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureInfra } from "./infra.mjs";
import { ensurePinnedNode } from "./pinned-node.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

const FILES = [
  "gateway/test/fuzz.int.test.ts",
  "services/sender-apns/test/apns-fuzz.int.test.ts",
  "services/sender-fcm/test/fcm-fuzz.int.test.ts",
  "services/sender-webpush/test/webpush-fuzz.int.test.ts",
];

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: process.env.HERALD_FUZZ_SEED || undefined },
    scale: { type: "string", default: process.env.HERALD_FUZZ_SCALE || "20" },
  },
});
const seed = values.seed === undefined ? randomInt(1, 2 ** 31 - 1) : Number(values.seed);
const scale = Number(values.scale);
if (!Number.isInteger(seed) || Math.abs(seed) >= 2 ** 31 || !(scale > 0)) {
  console.error("npm run fuzz: --seed must be a 32-bit integer and --scale a positive number");
  process.exit(2);
}

try {
  await ensurePinnedNode();
  await ensureInfra({ install: process.env.HERALD_INSTALL_INFRA === "1" });
} catch (err) {
  console.error(`npm run fuzz: ${err.message}`);
  process.exit(1);
}

const replay = `npm run fuzz -- --seed ${seed} --scale ${scale}`;
console.log(`npm run fuzz: seed ${seed}, scale ${scale} (replay: ${replay})`);
const figuresFile = path.join(tmpdir(), `herald-fuzz-${process.pid}.jsonl`);
const started = new Date();
const vitest = spawnSync("npx", ["vitest", "run", "--project", "integration", ...FILES], {
  stdio: "inherit",
  env: {
    ...process.env,
    HERALD_FUZZ_SEED: String(seed),
    HERALD_FUZZ_SCALE: String(scale),
    HERALD_FUZZ_REPORT: figuresFile,
  },
});
const passed = vitest.status === 0;
const suites = existsSync(figuresFile)
  ? readFileSync(figuresFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  : [];
rmSync(figuresFile, { force: true });

const day = started.toISOString().slice(0, 10);
const report = path.join(root, "fuzz", "results", `${day}.md`);
mkdirSync(path.dirname(report), { recursive: true });
const rows = suites.map(
  (s) =>
    `| ${s.suite} | ${Object.entries(s.figures)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")} |`,
);
const seconds = Math.round((Date.now() - started.getTime()) / 1000);
appendFileSync(
  report,
  [
    ...(existsSync(report) && readFileSync(report, "utf8").length > 0 ? [""] : [`# Fuzz runs of ${day}`, ""]),
    `## ${started.toISOString().slice(11, 19)} UTC: ${passed ? "passed" : "FAILED"}`,
    "",
    `Seed ${seed}, scale ${scale}, ${seconds} s, Node.js ${process.version}. Replay: \`${replay}\``,
    "",
    "| Suite | Figures |",
    "| --- | --- |",
    ...(rows.length > 0 ? rows : ["| (none reported) | |"]),
    "",
  ].join("\n"),
);
console.log(`npm run fuzz: ${passed ? "passed" : "FAILED"}; figures in ${path.relative(root, report)}`);
process.exit(vitest.status ?? 1);
