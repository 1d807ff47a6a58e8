import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { registerConsole } from "./console.js";

function builtConsole(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "herald-console-"));
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(
    path.join(dir, "index.html"),
    '<meta property="csp-nonce" nonce="HERALD_CSP_NONCE"><script type="module" src="/console/assets/index-abc.js" nonce="HERALD_CSP_NONCE"></script>',
  );
  writeFileSync(path.join(dir, "assets", "index-abc.js"), "console.log(1)");
  return dir;
}

describe("console plugin", () => {
  it("serves index.html for every console path with a fresh nonce in the page and the CSP", async () => {
    const app = Fastify();
    await registerConsole(app, { dir: builtConsole() });
    const pages = await Promise.all(["/console", "/console/", "/console/campaigns/123"].map((url) => app.inject(url)));
    const nonces = pages.map((res) => {
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.headers["cache-control"]).toBe("no-cache");
      const nonce = /nonce="([^"]+)"/.exec(res.body)![1]!;
      expect(nonce).not.toBe("HERALD_CSP_NONCE");
      expect(res.body).not.toContain("HERALD_CSP_NONCE");
      const csp = String(res.headers["content-security-policy"]);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain(`style-src 'self' 'nonce-${nonce}'`);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      return nonce;
    });
    expect(new Set(nonces).size).toBe(3);
  });

  it("caches hashed assets for a year and answers unknown ones with 404", async () => {
    const app = Fastify();
    await registerConsole(app, { dir: builtConsole() });
    const asset = await app.inject("/console/assets/index-abc.js");
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect((await app.inject("/console/assets/missing.js")).statusCode).toBe(404);
  });

  it("says how to build the console when it is not built", async () => {
    const app = Fastify();
    await registerConsole(app, { dir: path.join(os.tmpdir(), "herald-no-console-here") });
    const res = await app.inject("/console/apps");
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: "NotFound",
      message: expect.stringContaining("npm run build -w @herald/console"),
    });
  });
});
