#!/usr/bin/env node
// Compiles Herald's native addon, sender-webpush's P-256 key agreement
// (services/sender-webpush/native/p256-agree.c, why it exists: its comment), into
// native/build/ beside it, against the headers of the Node that runs this script. `npm run
// build` runs it and fails without a C compiler (`--required`: the image must carry it);
// `npm run dev` and `npm test` build it when missing or older than its source (installing
// Debian's gcc first when there is no compiler) and, when they cannot, go on: the sender
// then agrees keys with node:crypto, slower, and says so.
//
// One compiler call instead of node-gyp: node-gyp wants Python and fetches Node's headers
// from nodejs.org unless told where they are; a single C file against Node-API and the
// OpenSSL that Node links needs neither.
//
//   node scripts/native-build.mjs [--required]
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { aptInstall, which } from "./debian-packages.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export const NATIVE_ADDONS = [
  {
    source: "services/sender-webpush/native/p256-agree.c",
    // services/sender-webpush/src/key-agreement.ts loads it from here (NATIVE_ADDON).
    output: "services/sender-webpush/native/build/p256-agree.node",
  },
];

/** Node-API's and OpenSSL's headers, as Node's release archives and images lay them out. */
export function nodeHeaders() {
  return path.resolve(path.dirname(process.execPath), "..", "include", "node");
}

function stale(addon) {
  const output = path.join(root, addon.output);
  if (!existsSync(output)) return true;
  const built = statSync(output).mtimeMs;
  return [path.join(root, addon.source), fileURLToPath(import.meta.url)].some((f) => statSync(f).mtimeMs > built);
}

/** The C compiler: $CC, or cc, installed from Debian's packages when missing and `install`. */
function compiler(install) {
  if (process.env.CC) return process.env.CC;
  if (!which("cc") && install && process.platform === "linux" && which("apt-get")) aptInstall(["gcc", "libc6-dev"]);
  return "cc";
}

function compile(addon, cc) {
  const headers = nodeHeaders();
  if (!existsSync(path.join(headers, "node_api.h"))) throw new Error(`Node's headers are not at ${headers}`);
  const output = path.join(root, addon.output);
  mkdirSync(path.dirname(output), { recursive: true });
  // Node's symbols (Node-API, OpenSSL) resolve from the running node binary at load.
  const link = process.platform === "darwin" ? ["-bundle", "-undefined", "dynamic_lookup"] : ["-shared"];
  const args = ["-O2", "-fPIC", "-std=c11", "-Wall", "-Wextra", ...link, "-I", headers];
  const res = spawnSync(cc, [...args, "-o", output, path.join(root, addon.source)], { encoding: "utf8" });
  if (res.error) throw new Error(`no C compiler (${cc}): ${res.error.message}`);
  if (res.status !== 0) throw new Error(`${cc} failed on ${addon.source}:\n${res.stderr}`);
  // Warnings of a build that succeeded are still shown.
  if (res.stderr) process.stderr.write(res.stderr);
}

/**
 * Builds every addon that is missing or older than its source. Throws when one cannot be
 * built and `required`; otherwise answers the reasons, for the caller to print.
 */
export function ensureNativeBuilt({ required = false, force = false, install = false } = {}) {
  const problems = [];
  for (const addon of NATIVE_ADDONS) {
    if (!force && !stale(addon)) continue;
    try {
      compile(addon, compiler(install));
    } catch (err) {
      if (required) throw err;
      problems.push(`${addon.output}: ${err.message}`);
    }
  }
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    ensureNativeBuilt({ required: process.argv.includes("--required"), force: true });
  } catch (err) {
    console.error(`native-build: ${err.message}`);
    process.exit(1);
  }
}
