// Builds the admin console (console/, Vite) into console/dist when that build is missing
// or older than its sources: dev mode and the console's end-to-end test run it before
// starting the gateway, which serves console/dist (gateway/src/plugins/console.ts).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const consoleDir = path.join(root, "console");
const builtIndex = path.join(consoleDir, "dist", "index.html");
/** What the build reads, relative to console/: its own sources and the typed client's (@herald/client). */
const SOURCES = ["src", "index.html", "vite.config.ts", "package.json", "tsconfig.json", "../packages/client/src"];

/** The newest modification time (ms) of a file or of anything in a folder; 0 when it does not exist. */
export function newestMtime(p) {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

export function consoleBuildIsStale() {
  if (!existsSync(builtIndex)) return true;
  const built = statSync(builtIndex).mtimeMs;
  return SOURCES.some((s) => newestMtime(path.join(consoleDir, s)) > built);
}

/** Builds quietly when stale; throws with Vite's output when the build fails. */
export function ensureConsoleBuilt() {
  if (!consoleBuildIsStale()) return false;
  const vite = path.join(root, "node_modules", "vite", "bin", "vite.js");
  const res = spawnSync(process.execPath, [vite, "build", "--logLevel", "error"], {
    cwd: consoleDir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (res.status !== 0) {
    throw new Error(`building the console failed (npm run build -w @herald/console):\n${res.stdout}${res.stderr}`);
  }
  return true;
}
