// What `npm start` runs, built when stale: the steps of `npm run build` (package.json) that
// the processes need, each skipped when its output is newer than what it is made from.
// - tsc -b tsconfig.build.json: incremental by itself (each project's .tsbuildinfo), and
//   it leaves the outputs of an up-to-date project untouched;
// - the herald command's bundle (scripts/bundle.mjs), when packages/cli/dist is older than
//   tsc's output it is made from (packages/cli/build and the dist/ of every workspace the
//   command depends on), the bundler's script or the installed packages;
// - the native addon (scripts/native-build.mjs) and the console (scripts/console-build.mjs),
//   which check their own sources.
// The web SDK (@herald/web) is for browsers: no process runs it, and it is not built here.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureConsoleBuilt, newestMtime } from "./console-build.mjs";
import { ensureNativeBuilt, NATIVE_ADDONS } from "./native-build.mjs";
import { CLI_BUNDLE, CLI_COMPILED } from "./processes.mjs";
import { ENTRY_WORKSPACE, productionWorkspaces } from "./stage-release.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const at = (p) => path.join(root, p);

/** The oldest file of the bundle (main.js and every role's file); 0 when there is none. */
function oldestBundleMtime() {
  const roles = at(path.join(path.dirname(CLI_BUNDLE), "roles"));
  if (!existsSync(at(CLI_BUNDLE)) || !existsSync(roles)) return 0;
  const files = [at(CLI_BUNDLE), ...readdirSync(roles).map((f) => path.join(roles, f))];
  return Math.min(...files.map((f) => statSync(f).mtimeMs));
}

/** tsc's output that the bundle is made from: packages/cli/build and the dist/ of every workspace the command depends on. */
function compiledFolders() {
  return productionWorkspaces().map((w) =>
    at(w.name === ENTRY_WORKSPACE ? path.dirname(CLI_COMPILED) : path.join(w.dir, "dist")),
  );
}

/** Whether packages/cli/dist is missing or older than anything scripts/bundle.mjs reads. */
export function bundleIsStale() {
  const built = oldestBundleMtime();
  if (built === 0) return true;
  const inputs = [
    ...compiledFolders(),
    at("scripts/bundle.mjs"),
    // Bundled from node_modules too (@bufbuild/protobuf, @connectrpc/*): npm rewrites this on every install.
    at("node_modules/.package-lock.json"),
  ];
  return inputs.some((input) => newestMtime(input) > built);
}

/**
 * Builds what is stale and answers what it did, one phrase per step, for the caller to
 * print. Throws when a step fails (the native addon's failure is a warning instead: the
 * sender then agrees keys with node:crypto, as in dev mode).
 */
export async function buildStale({ warn = console.warn } = {}) {
  const done = [];
  const timed = async (what, step) => {
    const t0 = performance.now();
    const did = await step();
    done.push(`${what} ${did ? `built in ${((performance.now() - t0) / 1000).toFixed(1)} s` : "up to date"}`);
  };
  await timed("TypeScript (tsc -b)", () => {
    const t0 = Date.now();
    const tsc = spawnSync(process.execPath, [at("node_modules/typescript/bin/tsc"), "-b", "tsconfig.build.json"], {
      cwd: root,
      stdio: "inherit",
    });
    if (tsc.status !== 0) throw new Error("the TypeScript build failed (tsc -b tsconfig.build.json)");
    // tsc says nothing about what it did: an output written since it started tells.
    return Math.max(...compiledFolders().map(newestMtime)) >= t0;
  });
  await timed("bundle", async () => {
    if (!bundleIsStale()) return false;
    // Imported here: esbuild is a dependency, and the caller may have installed it just now.
    const { bundle } = await import("./bundle.mjs");
    await bundle();
    return true;
  });
  await timed("native addon", () => {
    const before = NATIVE_ADDONS.map((a) => newestMtime(at(a.output)));
    for (const problem of ensureNativeBuilt({ install: true })) warn(problem);
    return NATIVE_ADDONS.some((a, i) => newestMtime(at(a.output)) !== before[i]);
  });
  await timed("console", () => ensureConsoleBuilt());
  return done;
}
