#!/usr/bin/env node
// Builds @herald/web into dist/: the ESM module (herald.js), the same as one classic
// script that defines window.Herald (herald.global.js), the service worker
// (herald-sw.js), and the type declarations; prints each file's gzip size.
// `node build.mjs [outDir]`; the browser test builds into a folder of its own.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Builds into `outDir` (default dist/); answers each file's size and gzip size in bytes. */
export async function buildWebSdk(outDir = path.join(here, "dist"), { types = true } = {}) {
  const common = { bundle: true, minify: true, target: "es2022", legalComments: "none", logLevel: "warning" };
  const files = {
    "herald.js": { entryPoints: [path.join(here, "src/index.ts")], format: "esm" },
    "herald.global.js": {
      entryPoints: [path.join(here, "src/index.ts")],
      format: "iife",
      globalName: "HeraldSdk",
      // The classic script exposes the page's instance as window.Herald.
      footer: { js: "window.Herald=HeraldSdk.Herald;" },
    },
    "herald-sw.js": { entryPoints: [path.join(here, "src/sw.ts")], format: "iife" },
  };
  for (const [name, opts] of Object.entries(files)) {
    await build({ ...common, ...opts, outfile: path.join(outDir, name) });
  }
  if (types) {
    const tsc = spawnSync(
      "npx",
      [
        "tsc",
        "-p",
        path.join(here, "tsconfig.json"),
        "--noEmit",
        "false",
        "--emitDeclarationOnly",
        "--declaration",
      ].concat(["--outDir", outDir]),
      { stdio: "inherit" },
    );
    if (tsc.status !== 0) throw new Error("declarations of @herald/web failed");
  }
  return Object.fromEntries(
    Object.keys(files).map((name) => {
      const bytes = readFileSync(path.join(outDir, name));
      return [name, { bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length }];
    }),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = await buildWebSdk(process.argv[2] && path.resolve(process.argv[2]));
  for (const [name, { bytes, gzip }] of Object.entries(sizes)) {
    console.log(`${name.padEnd(18)} ${String(bytes).padStart(6)} B, ${String(gzip).padStart(5)} B gzip`);
  }
}
