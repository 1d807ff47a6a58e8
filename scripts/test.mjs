#!/usr/bin/env node
// `npm test`: runs on the pinned Node, makes sure the infrastructure runs (starting
// installed servers), checks format and lint (Biome) and types, then runs every vitest
// project. Extra arguments go to vitest.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureRenderer } from "./helm-render.mjs";
import { ensureInfra } from "./infra.mjs";
import { ensureNativeBuilt } from "./native-build.mjs";
import { ensureJava, ensureSwift } from "./native-sdks.mjs";
import { ensurePinnedNode } from "./pinned-node.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

try {
  await ensurePinnedNode();
  console.log(`npm test: Node.js ${process.version}`);
  await ensureInfra({ install: process.env.HERALD_INSTALL_INFRA === "1" });
  // The chart tests render with helm, or without it with tools/helm-render, built from
  // Debian's Go packages (installed here when missing).
  await ensureRenderer({ install: true });
  // sender-webpush's key agreement (a test checks that it loads).
  for (const problem of ensureNativeBuilt({ install: true })) console.warn(`npm test: ${problem}`);
  // The native client libraries' toolchains (test/e2e/native-sdks.e2e.test.ts runs their
  // suites): JDK, Maven and Debian's Maven repository; Swift in its own Debian 13 root.
  ensureJava();
  ensureSwift();
} catch (err) {
  console.error(`npm test: ${err.message}`);
  process.exit(1);
}

const biome = spawnSync("npx", ["biome", "check", "."], { stdio: "inherit" });
if (biome.status !== 0) {
  console.error("npm test: format or lint check failed (fix with: npm run format)");
  process.exit(biome.status ?? 1);
}

// The services and tests, then the console (its own tsconfig: DOM and JSX), then the web
// SDK: its page side (DOM), its service worker (WebWorker) and its unit tests.
const projects = ["tsconfig.json", "console/tsconfig.json"].concat(
  ["tsconfig.json", "tsconfig.sw.json", "tsconfig.test.json"].map((p) => `packages/web-sdk/${p}`),
);
for (const project of projects) {
  const tsc = spawnSync("npx", ["tsc", "-p", project, "--noEmit"], { stdio: "inherit" });
  if (tsc.status !== 0) {
    console.error(`npm test: type check of ${project} failed`);
    process.exit(tsc.status ?? 1);
  }
}

const vitest = spawnSync("npx", ["vitest", "run", ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(vitest.status ?? 1);
