import Fastify, { type FastifyInstance } from "fastify";
import { registerRoleCheck } from "../src/member-roles.js";
import { registerErrorHandling } from "../src/plugins/error-handling.js";
import type { Principal } from "../src/principal.js";
import { errorSchema } from "../src/schemas/common.js";

/**
 * A scope like /v1 with the role hook (registerRoleCheck) and the API's error answers, for
 * unit tests of the hook: the principal is `principalOf` the request's `x-as` header instead
 * of a token's; `schemas` collects each route's schema by "METHOD /url".
 */
export async function roleCheckedApp(
  principalOf: (as: string) => Principal | null,
  routes: (scope: FastifyInstance) => void,
  schemas = new Map<string, unknown>(),
): Promise<FastifyInstance> {
  const app = Fastify();
  app.addSchema(errorSchema);
  registerErrorHandling(app);
  await app.register(
    async (v1) => {
      v1.decorateRequest("principal", null);
      v1.addHook("onRequest", async (request) => {
        request.principal = principalOf(String(request.headers["x-as"]));
      });
      registerRoleCheck(v1);
      v1.addHook("onRoute", (route) => void schemas.set(`${String(route.method)} ${route.url}`, route.schema));
      routes(v1);
    },
    { prefix: "/v1" },
  );
  return app;
}
