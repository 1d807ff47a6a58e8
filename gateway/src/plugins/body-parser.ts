import type { FastifyInstance } from "fastify";

/**
 * Request bodies are JSON and nothing else: other media types answer 415. Bodiless POSTs
 * (opt-out, opt-in) may still say application/json, so an empty body means "no body"
 * rather than a parse error. Parsing itself is fastify's, which refuses __proto__ and
 * constructor pollution.
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
    parseJson(request, text, done);
  });
}
