import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SOURCE_NODE_ARGS } from "./processes.mjs";

// Generated code is committed; these fail when proto/ and proto/gen disagree or the
// protos break buf's lint rules, so a stale checkout cannot pass CI.
const root = path.resolve(import.meta.dirname, "..");
const buf = path.join(root, "node_modules/.bin/buf");
const out = mkdtempSync(path.join(tmpdir(), "herald-gen-"));

afterAll(() => rmSync(out, { recursive: true, force: true }));

function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name))],
  );
}

describe("protobuf code generation", () => {
  it("passes buf lint", () => {
    expect(() => execFileSync(buf, ["lint"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("matches the committed generated code", () => {
    execFileSync(buf, ["generate", "-o", out], { cwd: root, stdio: "pipe" });
    const fresh = path.join(out, "proto/gen");
    const committed = path.join(root, "proto/gen");
    expect(listFiles(committed).sort()).toEqual(listFiles(fresh).sort());
    for (const f of listFiles(fresh)) {
      expect(readFileSync(path.join(committed, f), "utf8"), `${f} is stale: run npm run gen`).toBe(
        readFileSync(path.join(fresh, f), "utf8"),
      );
    }
  }, 60_000);
});

describe("@herald/client types", () => {
  it("match what scripts/gen-client.ts generates from the gateway's OpenAPI document", () => {
    const target = "packages/client/src/schema.ts";
    const fresh = path.join(out, "client-schema.ts");
    execFileSync(process.execPath, [...SOURCE_NODE_ARGS, "scripts/gen-client.ts", fresh], { cwd: root, stdio: "pipe" });
    expect(readFileSync(path.join(root, target), "utf8"), `${target} is stale: run npm run gen`).toBe(
      readFileSync(fresh, "utf8"),
    );
  }, 60_000);
});
