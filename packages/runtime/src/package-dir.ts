import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/**
 * The folder of an installed Herald workspace (where its package.json is), for the files
 * that ship beside its code: SQL migrations, the console's static build. Found through
 * node_modules, not relative to the calling module: production runs every module from
 * one bundle per role in packages/cli/dist (scripts/bundle.mjs).
 */
export function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

/** The `version` of a Herald workspace's package.json, found the same way. */
export function packageVersion(name: string): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}
