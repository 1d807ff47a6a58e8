#!/usr/bin/env node
// `npm test`: makes sure the infrastructure runs (starting installed servers), checks
// types, then runs every vitest project. Extra arguments go to vitest.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInfra } from "./infra.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

try {
  await ensureInfra({ install: process.env.HERALD_INSTALL_INFRA === "1" });
} catch (err) {
  console.error(`npm test: ${err.message}`);
  process.exit(1);
}

const tsc = spawnSync("npx", ["tsc", "-p", "tsconfig.json", "--noEmit"], { stdio: "inherit" });
if (tsc.status !== 0) {
  console.error("npm test: type check failed");
  process.exit(tsc.status ?? 1);
}

const vitest = spawnSync("npx", ["vitest", "run", ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(vitest.status ?? 1);
