import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { HERALD_NODE_OPTIONS, nodeFlagsOf, nodeOptionsOf } from "./processes.mjs";
import { ENTRY_WORKSPACE, productionWorkspaces } from "./stage-release.mjs";

// The image cannot be built here (no Docker engine), so what can be checked without one
// is checked: the Dockerfile stays in step with the workspaces and keeps its promises,
// and skaffold and compose point at files that exist.
const root = path.resolve(import.meta.dirname, "..");
const read = (f: string) => readFileSync(path.join(root, f), "utf8");
const dockerfile = read("deploy/Dockerfile");
const lock = JSON.parse(read("package-lock.json"));
const workspaceDirs = Object.entries(lock.packages as Record<string, { link?: boolean; resolved?: string }>)
  .filter(([k, v]) => k.startsWith("node_modules/") && v.link)
  .map(([, v]) => v.resolved!);

describe("deploy/Dockerfile", () => {
  it("copies every workspace's package.json before npm ci, so the lock installs as is", () => {
    expect(workspaceDirs.length).toBeGreaterThan(10);
    const ci = dockerfile.indexOf("RUN npm ci");
    for (const dir of workspaceDirs) {
      const copy = dockerfile.indexOf(`COPY ${dir}/package.json ${dir}/`);
      expect(copy, `${dir}/package.json is not copied`).toBeGreaterThan(-1);
      expect(copy).toBeLessThan(ci);
    }
  });

  it("runs a non-root numeric user, NODE_ENV=production and the herald entry in a runtime stage without npm", () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    expect(runtime).toMatch(/^\s*USER 10001:10001$/m);
    expect(runtime).toMatch(/^ENV NODE_ENV=production$/m);
    // The same Node options as dev mode, the tests and the benchmarks run with.
    expect(runtime).toContain(`ENV NODE_OPTIONS="${HERALD_NODE_OPTIONS}"\n`);
    expect(runtime).toContain('ENTRYPOINT ["node", "/app/packages/cli/dist/main.js"]');
    expect(runtime).toMatch(/rm -rf \/usr\/local\/lib\/node_modules\/npm/);
    expect(runtime).toContain("COPY --from=build --chown=root:root /app /app");
    for (const label of ["title", "version", "revision", "source"]) {
      expect(runtime).toContain(`org.opencontainers.image.${label}=`);
    }
  });

  it("copies every script `npm run build` runs, and the scripts they import, before it runs it", () => {
    const build = JSON.parse(read("package.json")).scripts.build as string;
    const scripts = [...build.matchAll(/node (scripts\/[\w.-]+\.mjs)/g)].map((m) => m[1]!);
    expect(scripts).toContain("scripts/bundle.mjs");
    for (const script of scripts) {
      for (const [, imported] of read(script).matchAll(/^import .* from "\.\/([\w.-]+\.mjs)";$/gm)) {
        if (!scripts.includes(`scripts/${imported}`)) scripts.push(`scripts/${imported}`);
      }
    }
    expect(scripts).toContain("scripts/debian-packages.mjs");
    const run = dockerfile.indexOf("RUN npm run build");
    for (const script of scripts) {
      const copy = new RegExp(`^COPY .*\\b${script.replace(".", "\\.")}\\b`, "m").exec(dockerfile);
      expect(copy, `${script} is not copied into the build stage`).not.toBeNull();
      expect(copy!.index).toBeLessThan(run);
    }
  });

  it("has a C compiler in the build stage for the native addon, and none in the runtime stage", () => {
    const runtimeAt = dockerfile.lastIndexOf("\nFROM ");
    const install = /apt-get install -y --no-install-recommends gcc libc6-dev/.exec(dockerfile);
    expect(install, "the build stage installs no C compiler").not.toBeNull();
    expect(install!.index).toBeLessThan(dockerfile.indexOf("RUN npm run build"));
    expect(install!.index).toBeLessThan(runtimeAt);
    expect(dockerfile.slice(runtimeAt)).not.toMatch(/apt-get install/);
  });

  it("builds from a pinned Node 24 image, never latest", () => {
    const from = /^ARG NODE_IMAGE=(.+)$/m.exec(dockerfile)?.[1];
    expect(from).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim$/);
    expect(dockerfile).not.toMatch(/:latest\b/);
  });

  it("ships the workspaces the herald command needs, and never the simulator", () => {
    const names = productionWorkspaces().map((w) => w.name);
    expect(names[0]).toBe(ENTRY_WORKSPACE);
    for (const n of ["@herald/gateway", "@herald/sender-apns", "@herald/runtime", "@herald/proto"]) {
      expect(names).toContain(n);
    }
    expect(names).not.toContain("@herald/provider-sim");
  });
});

describe("skaffold.yaml and deploy/compose.yaml", () => {
  it("skaffold builds deploy/Dockerfile and deploys charts/herald with values files that exist", () => {
    const skaffold = parse(read("skaffold.yaml"));
    expect(skaffold.build.artifacts[0].docker.dockerfile).toBe("deploy/Dockerfile");
    const release = skaffold.deploy.helm.releases[0];
    expect(release.chartPath).toBe("charts/herald");
    const files = [
      ...release.valuesFiles,
      ...skaffold.profiles.flatMap((p: any) => p.patches.flatMap((x: any) => x.value)),
    ];
    for (const f of files) expect(() => read(f), f).not.toThrow();
    expect(release.setValueTemplates["image.repository"]).toContain("IMAGE_REPO_herald");
  });

  it("compose starts PostgreSQL, NATS with JetStream and Redis, and every role from the image", () => {
    const compose = parse(read("deploy/compose.yaml"), { merge: true });
    expect(compose.services.nats.command).toContain("-js");
    const roles = Object.entries(compose.services as Record<string, any>)
      .filter(([, s]) => s.image?.startsWith("herald:"))
      .map(([, s]) => s.command[0])
      .sort();
    expect(roles).toEqual(
      ["campaign", "credential", "device-registry", "gateway", "sender-apns", "sender-fcm", "sender-webpush"].sort(),
    );
  });

  it("compose runs each role with dev mode's node flags and NODE_OPTIONS (the image's where it sets none)", () => {
    const compose = parse(read("deploy/compose.yaml"), { merge: true });
    for (const s of Object.values(compose.services as Record<string, any>)) {
      if (!s.image?.startsWith("herald:")) continue;
      const role = s.command[0] as string;
      expect(s.entrypoint ?? ["node", "/app/packages/cli/dist/main.js"], role).toEqual([
        "node",
        ...nodeFlagsOf(role),
        "/app/packages/cli/dist/main.js",
      ]);
      expect(s.environment.NODE_OPTIONS ?? HERALD_NODE_OPTIONS, role).toBe(nodeOptionsOf(role));
    }
  });
});
