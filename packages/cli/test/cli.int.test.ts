import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SOURCE_NODE_ARGS } from "../../../scripts/processes.mjs";

// The `herald` command as a user meets it: usage errors and configuration errors are one
// readable line (plus usage), never a stack trace, and never echo a value.
const root = path.resolve(import.meta.dirname, "../../..");

function herald(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [...SOURCE_NODE_ARGS, "packages/cli/src/main.ts", ...args], {
    cwd: root,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", ...env },
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the herald command", () => {
  it("lists the roles with --help", () => {
    const r = herald(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "roles: gateway, credential, device-registry, campaign, sender-apns, sender-fcm, sender-webpush",
    );
  });

  it("refuses a missing or unknown role with exit code 2 and the usage", () => {
    for (const args of [[], ["sender-nokia"], ["gateway", "extra"]]) {
      const r = herald(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^herald: (no role given|unknown role "[^"]*")\nusage: herald <role>\nroles: /);
    }
  });

  it("ends a role with bad configuration in one line naming every bad variable, and no value", () => {
    const secretish = "not-a-key-but-should-not-be-echoed-anyway";
    const r = herald(["credential"], { PORT: "70000", HERALD_BOOTSTRAP_API_KEY: secretish, LOG_LEVEL: "loud" });
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^credential: invalid configuration: /);
    for (const name of ["LOG_LEVEL", "PORT", "HERALD_MASTER_KEY", "HERALD_BOOTSTRAP_API_KEY"]) {
      expect(lines[0]).toContain(name);
    }
    expect(r.stderr).not.toContain(secretish);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("does the same for every role", () => {
    for (const role of ["gateway", "device-registry", "campaign", "sender-apns", "sender-fcm", "sender-webpush"]) {
      const r = herald([role], { LOG_LEVEL: "loud", ADMIN_PORT: "x" });
      expect(r.code, role).toBe(1);
      expect(r.stderr.trimEnd().split("\n"), role).toHaveLength(1);
      expect(r.stderr, role).toMatch(new RegExp(`^${role}: invalid configuration: .*LOG_LEVEL`));
    }
  });
});
