import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import { packageDir, statusOf } from "@herald/runtime";
import { errorBody } from "../http-errors.js";

/** The console's pages are not part of the REST API's OpenAPI document. */
const HIDDEN = { schema: { hide: true } };
/**
 * The admin console (console/, a Vite build) under /console: hashed assets cached for a
 * year, and index.html for every other /console path (the single-page app routes in the
 * browser), rendered per request with a fresh CSP nonce and never cached.
 */

/**
 * The console's build, console/dist beside the gateway's folder (in the repository and in
 * the image alike; the console is no dependency of the gateway's to be found by name).
 */
export const CONSOLE_DIST = path.join(packageDir("@herald/gateway"), "../console/dist");

/** What console/vite.config.ts leaves in the built index.html for the nonce. */
const NONCE_PLACEHOLDER = "HERALD_CSP_NONCE";

/**
 * Scripts come from this origin only. Styles too, plus the `<style>` tags Mantine adds at
 * run time, which carry the page's nonce (console/src/nonce.ts). The API and the OAuth
 * endpoints are same-origin; notification images in previews may be any https URL.
 */
export function consoleCsp(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data: https:",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const COMMON_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

export interface ConsoleOptions {
  /** The built console; CONSOLE_DIST by default. */
  dir?: string;
}

export async function registerConsole(app: FastifyInstance, opts: ConsoleOptions = {}): Promise<void> {
  const dir = opts.dir ?? CONSOLE_DIST;
  const indexFile = path.join(dir, "index.html");

  if (!existsSync(indexFile)) {
    app.log.warn({ dir }, "console not built: /console answers 404 until `npm run build -w @herald/console`");
    const notBuilt = (_request: unknown, reply: FastifyReply) =>
      reply
        .code(statusOf("NotFound"))
        .type("application/json; charset=utf-8")
        .send(
          errorBody(
            "NotFound",
            "The console is not built. Run `npm run build -w @herald/console` (or `npm run build`) and restart the gateway.",
          ),
        );
    app.get("/console", HIDDEN, notBuilt);
    app.get("/console/*", HIDDEN, notBuilt);
    return;
  }

  await app.register(fastifyStatic, {
    root: path.join(dir, "assets"),
    prefix: "/console/assets/",
    decorateReply: false,
    index: false,
    // File names carry a content hash: a changed file is a new URL.
    cacheControl: false,
    setHeaders: (reply) => {
      reply.headers({ ...COMMON_HEADERS, "cache-control": "public, max-age=31536000, immutable" });
    },
  });

  // Read once: the build does not change under a running gateway.
  const template = await readFile(indexFile, "utf8");
  const page = async (_request: unknown, reply: FastifyReply) => {
    const nonce = randomBytes(16).toString("base64");
    const html = template.replaceAll(NONCE_PLACEHOLDER, nonce);
    return reply
      .headers({ ...COMMON_HEADERS, "cache-control": "no-cache", "content-security-policy": consoleCsp(nonce) })
      .type("text/html; charset=utf-8")
      .send(html);
  };
  app.get("/console", HIDDEN, page);
  app.get("/console/*", HIDDEN, page);
}
