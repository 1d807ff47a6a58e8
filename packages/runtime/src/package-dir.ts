import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/**
 * The folder of an installed Herald workspace (where its package.json is), for the files
 * that ship beside its code: SQL migrations, the console's static build, the version.
 * Found through node_modules, not relative to the calling module: production runs every
 * module from one bundle in packages/cli/dist (scripts/bundle.mjs).
 */
export function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

/** The `version` of a Herald workspace's package.json. */
export function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(path.join(packageDir(name), "package.json"), "utf8")) as { version: string }).version;
}
