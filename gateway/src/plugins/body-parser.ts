import type { FastifyInstance } from "fastify";
import { badRequest } from "../http-errors.js";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../json-depth.js";

/**
 * Request bodies are JSON, or NDJSON for the device import: other media types answer 415. Bodiless POSTs
 * (opt-out, opt-in) may still say application/json, so an empty body means "no body"
 * rather than a parse error. Parsing itself is fastify's, which refuses __proto__ and
 * constructor pollution; nesting deeper than any field needs is refused first (json-depth.ts).
 */
export function registerBodyParser(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
      done(badRequest(`request body is nested more than ${MAX_JSON_DEPTH} levels deep`), undefined);
      return;
    }
    parseJson(request, text, done);
  });
  // NDJSON (the device import) is handed to its route as the raw stream: read line by
  // line there, in bounded memory, whatever its size.
  app.addContentTypeParser("application/x-ndjson", (_request, payload, done) => done(null, payload));
}
