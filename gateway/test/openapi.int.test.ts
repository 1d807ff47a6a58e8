import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createLogger } from "@herald/runtime";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../src/app.js";
import { connectBackends, UNUSED_BACKENDS } from "../src/backends.js";
import { DeferredCompilation } from "../src/deferred-compilation.js";
import { gatewayConfig } from "./harness.js";

// The document and the docs page need no backend: the gateway is built against clients
// and a Redis connection that are never used.
const gatewayDir = path.resolve(import.meta.dirname, "..");
let app: FastifyInstance;
let close: () => Promise<void>;
const deferred = new DeferredCompilation();

beforeAll(async () => {
  const backends = connectBackends(UNUSED_BACKENDS);
  const redis = new Redis("redis://127.0.0.1:9", { lazyConnect: true });
  app = await build({
    config: gatewayConfig(),
    ...backends.clients,
    redis,
    log: createLogger("gateway", "silent"),
    deferredCompilation: deferred,
  });
  close = async () => {
    await app.close();
    backends.close();
    redis.disconnect();
  };
});

afterAll(async () => {
  await close?.();
});

type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref?: string } }> }
  >;
};

describe("route schemas", () => {
  // First in the file: no request has compiled any of them yet.
  it("every request validator and response serializer compiles (production compiles each on first use)", async () => {
    await app.ready();
    const compiled = deferred.compileAll();
    expect(deferred.compileAll()).toBe(0);
    // At least a serializer per documented operation (each has a success response).
    const paths = (await app.inject({ url: "/openapi.json" })).json().paths as Record<string, object>;
    const operations = Object.values(paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(operations).toBeGreaterThan(50);
    expect(compiled).toBeGreaterThan(operations);
  });
});

describe("GET /openapi.json", () => {
  it("is OpenAPI 3.1.0 with every operation named, tagged and its errors documented", async () => {
    const res = await app.inject({ url: "/openapi.json" });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.description).toMatch(/let through uncounted/);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    for (const p of [
      "/v1/apps",
      "/v1/apps/{app_id}",
      "/v1/apps/{app_id}/platform-config",
      "/v1/apps/{app_id}/api-keys",
      "/v1/apps/{app_id}/api-keys/{key_id}",
      "/v1/devices/register",
      "/v1/devices",
      "/v1/devices/{id}",
      "/v1/devices/{id}/opt-out",
      "/v1/devices/{id}/opt-in",
      "/v1/push/send",
      "/v1/push/send-to-users",
      "/v1/push/send-to-segment",
      "/v1/push/send-to-devices",
      "/v1/campaigns",
      "/v1/campaigns/{id}",
      "/v1/campaigns/{id}/stats",
      "/v1/campaigns/{id}/cancel",
      "/v1/campaigns/{id}/deliveries",
      "/v1/campaigns/{id}/deliveries/export",
      "/v1/devices/{id}/deliveries",
      "/v1/apps/{app_id}/users/{external_id}",
      "/v1/segments",
      "/v1/segments/{id}",
      "/v1/segments/preview",
      "/v1/me",
      "/v1/org",
      "/v1/members",
      "/v1/members/{user_id}",
      "/v1/invitations",
      "/v1/invitations/{invitation_id}",
      "/v1/invitations/accept",
      "/v1/oauth-clients",
      "/v1/oauth-clients/{client_id}",
      "/healthz",
      "/readyz",
      "/metrics",
    ]) {
      expect(Object.keys(paths)).toContain(p);
    }
    const ids = new Set<string>();
    for (const [p, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.summary, `${method} ${p}`).toBeTruthy();
        expect(op.tags?.length, `${method} ${p}`).toBeGreaterThan(0);
        expect(ids.has(op.operationId!), `${method} ${p}`).toBe(false);
        ids.add(op.operationId!);
        if (!p.startsWith("/v1/")) {
          expect(op.security).toEqual([]);
          continue;
        }
        for (const status of ["401", "429", "500"]) {
          expect(op.responses[status]?.content?.["application/json"]?.schema.$ref, `${method} ${p} ${status}`).toBe(
            "#/components/schemas/Error",
          );
        }
        expect(Object.keys(op.responses["429"]!.headers!)).toEqual(
          expect.arrayContaining(["Retry-After", "X-RateLimit-Remaining"]),
        );
        const successes = Object.keys(op.responses).filter((s) => s.startsWith("2"));
        expect(successes.length, `${method} ${p}`).toBeGreaterThan(0);
        for (const success of successes) {
          // Send replays (200) add Idempotent-Replayed; every success has the rate-limit headers first.
          expect(Object.keys(op.responses[success]!.headers!).slice(0, 3)).toEqual([
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
          ]);
        }
      }
    }
    const platformConfig = paths["/v1/apps/{app_id}/platform-config"]!.post as unknown as {
      requestBody: {
        content: { "application/json": { schema: { discriminator: { mapping: Record<string, string> } } } };
      };
    };
    expect(platformConfig.requestBody.content["application/json"].schema.discriminator.mapping).toEqual({
      ios: "#/components/schemas/IosPlatformConfigInput",
      android: "#/components/schemas/AndroidPlatformConfigInput",
      web: "#/components/schemas/WebPlatformConfigInput",
    });
  });

  it("lints clean with redocly", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "herald-openapi-"));
    try {
      const file = path.join(dir, "openapi.json");
      await writeFile(file, (await app.inject({ url: "/openapi.json" })).body);
      const { stdout } = await promisify(execFile)(
        "npx",
        ["--no-install", "redocly", "lint", "--format=json", `--config=${path.join(gatewayDir, "redocly.yaml")}`, file],
        {
          cwd: gatewayDir,
          env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
          maxBuffer: 16 * 1024 * 1024,
        },
      ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
      };
      const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
      expect(report.totals.errors, problems.join("\n")).toBe(0);
      expect(report.totals.warnings, problems.join("\n")).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("GET /docs", () => {
  it("serves the interactive reference from local assets only", async () => {
    const page = await app.inject({ url: "/docs" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    const html = page.body;
    expect(html).toContain("<title>Herald API reference</title>");
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(3);
    for (const asset of assets) {
      expect(asset.startsWith("/docs/") || asset.startsWith("./"), asset).toBe(true);
      const url = asset.startsWith("./") ? `/docs/${asset.slice(2)}` : asset;
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      if (url.endsWith("swagger-initializer.js")) {
        // No resource from elsewhere (a comment may still cite a web page).
        expect(res.body).not.toMatch(/(src|href|url)\s*[=:(]\s*['"]?(https?:)?\/\//i);
        expect(res.body).toContain("validatorUrl: null");
      }
    }
    // The browser is told the same: nothing may load from elsewhere.
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https?:|\.io|\.com/);
    const spec = await app.inject({ url: "/docs/json" });
    expect(spec.statusCode).toBe(200);
    expect(spec.json().openapi).toBe("3.1.0");
  });
});
