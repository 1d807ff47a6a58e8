import * as esbuild from "esbuild";
import { describe, expect, it } from "vitest";
import { common, externals } from "./bundle.mjs";

// What a role's production file loads from node_modules decides much of its memory
// (scripts/bundle.mjs). Bundled here from the sources, as the build does from tsc's output.
async function packagesImportedBy(role: string): Promise<string[]> {
  const result = await esbuild.build({
    ...common,
    entryPoints: [`packages/cli/src/roles/${role}.ts`],
    conditions: ["herald-source"],
    outdir: "unused",
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins: [externals()],
  });
  const imports = Object.values(result.metafile!.outputs).flatMap((o) => o.imports);
  return [...new Set(imports.filter((i) => i.external && !i.path.startsWith("node:")).map((i) => i.path))].sort();
}

describe("each role's bundle", () => {
  it("leaves PostgreSQL's client to the roles with a database", async () => {
    for (const role of ["credential", "device-registry", "campaign"]) {
      expect(await packagesImportedBy(role), role).toContain("pg");
    }
    for (const role of ["gateway", "sender-apns", "sender-fcm", "sender-webpush"]) {
      expect(await packagesImportedBy(role), role).not.toContain("pg");
    }
  });

  it("bundles Herald's packages, protobuf and Connect, and leaves every other package to node_modules", async () => {
    const imported = await packagesImportedBy("sender-apns");
    expect(imported.filter((p) => /^(@herald\/|@bufbuild\/|@connectrpc\/)/.test(p))).toEqual([]);
    expect(imported).toEqual(expect.arrayContaining(["@nats-io/jetstream", "pino", "prom-client"]));
  });
});
