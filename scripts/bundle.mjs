#!/usr/bin/env node
// The `herald` command as production runs it, bundled by esbuild from tsc's output
// (packages/cli/build/) into packages/cli/dist/: main.js, which starts tracing and loads
// the chosen role, and roles/<role>.js, one file per role with everything of Herald's it
// uses and nothing else (the web push sender's encryption worker beside them, where
// encryptor.ts looks for it). `npm run build` runs it after tsc.
//
// Why: a process that imports a package's index loads all of it. @bufbuild/protobuf's
// decodes every well-known type's descriptor (descriptor.proto, the compiler plugin's,
// ...) that Herald never uses, and @herald/runtime's brought pg into the senders and the
// gateway. Bundled and tree-shaken per role, every process holds less (docs/operations.md,
// "Memory"). Herald's shared packages (runtime, sender, proto) declare `"sideEffects":
// false`, so a role's file leaves out their modules it does not use, and what those
// import: without it the senders' files still imported pg. Other packages stay imports of
// node_modules, as before: OpenTelemetry's instrumentations patch pg, ioredis and
// node:http as they load, which they cannot do inside a bundle.
//
//   node scripts/bundle.mjs [--clean]
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "packages/cli/dist");

/** Bare imports bundled; any other package is left to node_modules. */
export const BUNDLED = /^(@herald\/|@bufbuild\/protobuf|@connectrpc\/)/;

/** esbuild's options shared by every output. */
export const common = {
  absWorkingDir: root,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node24",
  logLevel: "warning",
};

/** Leaves every package but BUNDLED to node_modules, and (for main.js) the role modules to their own files. */
export const externals = (extra = /$^/) => ({
  name: "externals",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (extra.test(args.path)) return { path: args.path, external: true };
      if (/^[./]/.test(args.path) || BUNDLED.test(args.path)) return undefined;
      return { path: args.path, external: true };
    });
  },
});

export async function bundle() {
  rmSync(outdir, { recursive: true, force: true });
  await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: ["packages/cli/build/main.js"],
      outfile: path.join(outdir, "main.js"),
      plugins: [externals(/^\.\/roles\//)],
    }),
    esbuild.build({
      ...common,
      entryPoints: Object.fromEntries([
        // One per module of packages/cli/src/roles/.
        ...readdirSync(path.join(root, "packages/cli/build/roles"))
          .filter((file) => file.endsWith(".js"))
          .map((file) => [path.basename(file, ".js"), `packages/cli/build/roles/${file}`]),
        ["encryption-worker", "services/sender-webpush/dist/encryption-worker.js"],
      ]),
      outdir: path.join(outdir, "roles"),
      plugins: [externals()],
    }),
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes("--clean")) rmSync(outdir, { recursive: true, force: true });
  else await bundle();
}
