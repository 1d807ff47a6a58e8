import type { RegisterDeviceRequest } from "@herald/proto/device";
import { ImportOutcome } from "@herald/proto/device";
import type { FastifyInstance } from "fastify";
import { fieldErrors, type SchemaViolation, unsupportedMediaType } from "../http-errors.js";
import { ndjsonLines } from "../ndjson-lines.js";
import { principalOf } from "../plugins/auth.js";
import { importDevicesSchema, importLineSchema } from "../schemas/devices.js";
import type { RouteDeps } from "./deps.js";
import { registerRequest, type RegisterBody } from "./devices.js";
import { appInQuery } from "../early-authorization.js";

/** Devices per ImportDevices call (the registry's maximum). */
const BATCH = 1_000;
/** ImportDevices calls in flight per import: reading goes on while the registry writes. */
const IN_FLIGHT = 4;
/** A register body is a few hundred bytes; a web subscription a little more. */
const MAX_LINE_BYTES = 16 * 1024;
const MAX_REJECTIONS_SHOWN = 100;

interface ImportCounts {
  lines: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  rejections: { line: number; reason: string }[];
}

/**
 * POST /v1/devices/import: NDJSON of register bodies, streamed (bounded memory whatever
 * the size), validated line by line like POST /v1/devices/register, upserted by the
 * registry 1,000 at a time with up to four batches in flight.
 */
export function registerDeviceImportRoute(scope: FastifyInstance, deps: RouteDeps): void {
  const compile = scope.validatorCompiler;
  if (!compile) throw new Error("the validator compiler must be set before the routes");
  const validateLine = compile({
    schema: importLineSchema,
    method: "POST",
    url: "/v1/devices/import",
    httpPart: "body",
  });

  scope.post<{ Querystring: { app_id: string } }>(
    "/devices/import",
    { schema: importDevicesSchema, config: { minRole: "developer", authorize: appInQuery(deps.apps) } },
    async (request) => {
      const body = request.body as AsyncIterable<Buffer> | undefined;
      if (!body || typeof body[Symbol.asyncIterator] !== "function") {
        throw unsupportedMediaType("the body must be application/x-ndjson");
      }
      const app = await deps.apps.authorized(principalOf(request), request.query.app_id);
      const counts: ImportCounts = { lines: 0, created: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [] };
      const reject = (line: number, reason: string) => {
        counts.rejected++;
        if (counts.rejections.length < MAX_REJECTIONS_SHOWN) counts.rejections.push({ line, reason });
      };
      const write = async (batch: { line: number; device: RegisterDeviceRequest }[]) => {
        const { results } = await deps.devices.importDevices({ appId: app.id, devices: batch.map((b) => b.device) });
        results.forEach((r, i) => {
          if (r.outcome === ImportOutcome.CREATED) counts.created++;
          else if (r.outcome === ImportOutcome.UPDATED) counts.updated++;
          else if (r.outcome === ImportOutcome.UNCHANGED) counts.unchanged++;
          else reject(batch[i]!.line, r.reason);
        });
      };
      const inFlight: Promise<void>[] = [];
      let batch: { line: number; device: RegisterDeviceRequest }[] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        inFlight.push(write(batch));
        batch = [];
        if (inFlight.length >= IN_FLIGHT) await inFlight.shift();
      };
      try {
        for await (const line of ndjsonLines(body, MAX_LINE_BYTES)) {
          counts.lines++;
          if ("tooLong" in line) {
            reject(line.number, `the line is longer than ${MAX_LINE_BYTES} bytes`);
            continue;
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(line.text);
          } catch {
            reject(line.number, "the line is not valid JSON");
            continue;
          }
          if (validateLine(parsed) !== true) {
            const errors = ((validateLine as { errors?: SchemaViolation[] }).errors ?? []) as SchemaViolation[];
            const first = fieldErrors(errors)[0];
            reject(line.number, first ? `${first.field} ${first.message}` : "the line is not a register body");
            continue;
          }
          const lineBody = parsed as Partial<RegisterBody>;
          if (lineBody.app_id !== undefined && lineBody.app_id.toLowerCase() !== app.id) {
            reject(line.number, "/app_id differs from the app being imported into");
            continue;
          }
          batch.push({
            line: line.number,
            device: registerRequest(app.id, { ...lineBody, app_id: app.id } as RegisterBody),
          });
          if (batch.length === BATCH) await flush();
        }
        await flush();
      } finally {
        // Whatever happened, no write is left running unobserved.
        await Promise.allSettled(inFlight);
      }
      await Promise.all(inFlight);
      return counts;
    },
  );
}
