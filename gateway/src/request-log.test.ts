import Fastify, { type FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import { createLogger } from "@herald/runtime";
import { loggableUrl, registerRequestLog, requestLogger } from "./request-log.js";

describe("loggableUrl", () => {
  it("replaces the values of secret query parameters", () => {
    expect(loggableUrl("/invitations/accept?token=s3cr3t")).toBe("/invitations/accept?token=%5Bredacted%5D");
    expect(loggableUrl("/console/callback?code=abc&state=xyz")).toBe("/console/callback?code=%5Bredacted%5D&state=xyz");
    expect(loggableUrl("/x?Token=a&token=b")).not.toMatch(/=a|=b/);
  });

  it("keeps every other URL as it is", () => {
    expect(loggableUrl("/v1/devices?app_id=1&external_id=u-1")).toBe("/v1/devices?app_id=1&external_id=u-1");
    expect(loggableUrl("/v1/apps")).toBe("/v1/apps");
  });
});

describe("registerRequestLog", () => {
  async function logged(urls: string[]) {
    const lines: string[] = [];
    const app = Fastify({
      loggerInstance: requestLogger(
        createLogger("gateway", "info", { write: (l: string) => lines.push(l) }),
      ) as FastifyBaseLogger,
      disableRequestLogging: true,
    });
    registerRequestLog(app, new Set(["/healthz"]));
    app.get("/v1/things", async () => ({ ok: true }));
    app.get("/healthz", async () => "ok");
    for (const url of urls) await app.inject({ method: "GET", url });
    await app.close();
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  it("writes one line per request with the request, its status and time, the URL made loggable", async () => {
    const lines = await logged(["/v1/things?token=s3cr3t", "/v1/nothing"]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      msg: "request completed",
      req: { method: "GET", url: "/v1/things?token=%5Bredacted%5D" },
      res: { statusCode: 200 },
    });
    expect(lines[0]!.responseTime).toEqual(expect.any(Number));
    expect(lines[1]).toMatchObject({ req: { url: "/v1/nothing" }, res: { statusCode: 404 } });
    expect(JSON.stringify(lines)).not.toContain("s3cr3t");
  });

  it("writes nothing for the quiet paths", async () => {
    expect(await logged(["/healthz", "/healthz"])).toEqual([]);
  });
});
