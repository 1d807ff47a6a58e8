import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppDirectory } from "./app-directory.js";
import { listAppId } from "./authorize.js";
import { toErrorReply } from "./http-errors.js";
import { principalOf } from "./plugins/auth.js";

/**
 * Authorization before the body: a route declares how to authorize the resource its path
 * or query names (`authorize`), or the app its body names (`authorizeBody`), and it is
 * checked here, in the request's hooks, so another organization's or app's credentials get
 * 403 whatever they send: never 415 (media type), 413 (size) or 400 (parse, schema) first.
 * 401 and the route's role come earlier still (plugins/auth.ts, member-roles.ts).
 *
 * `authorize` runs in preParsing, before the body is read; `authorizeBody` runs in
 * preValidation, right after parsing and before the schema. Only a refusal (403) is
 * answered early: any other failure (an unknown id, a backend down) is left for the
 * route, which meets it again in its usual order (path ids are still 404 after auth).
 * The route's handler calls the same lookups; `perRequest` makes them one call.
 */

export type Authorize = (request: FastifyRequest) => Promise<unknown>;

declare module "fastify" {
  interface FastifyContextConfig {
    /** Authorizes what the path or query names, before the body is read. */
    authorize?: Authorize;
    /** Authorizes the app the (parsed, not yet validated) body names, before validation. */
    authorizeBody?: Authorize;
  }
}

const memo = new WeakMap<FastifyRequest, Map<string, Promise<unknown>>>();

/** `load` once per request and key: the early check and the handler share the answer. */
export function perRequest<T>(request: FastifyRequest, key: string, load: () => Promise<T>): Promise<T> {
  let forRequest = memo.get(request);
  if (!forRequest) {
    forRequest = new Map();
    memo.set(request, forRequest);
  }
  let loaded = forRequest.get(key) as Promise<T> | undefined;
  if (!loaded) {
    loaded = load();
    forRequest.set(key, loaded);
  }
  return loaded;
}

/** Valid for the route's own schema of that part (none: nothing to check). */
function partValid(request: FastifyRequest, part: "params" | "querystring", data: unknown): boolean {
  const validate = request.getValidationFunction(part);
  return !validate || validate(data) === true;
}

async function refuseEarly(authorize: Authorize, request: FastifyRequest): Promise<void> {
  try {
    await authorize(request);
  } catch (err) {
    if (toErrorReply(err).status === 403) throw err;
  }
}

export function registerEarlyAuthorization(scope: FastifyInstance): void {
  scope.addHook("onRoute", (route) => {
    const { authorize, authorizeBody } = route.config ?? {};
    if (authorize !== undefined && typeof authorize !== "function") {
      throw new Error(`${String(route.method)} ${route.url}: config.authorize must be a function`);
    }
    if (authorizeBody !== undefined && typeof authorizeBody !== "function") {
      throw new Error(`${String(route.method)} ${route.url}: config.authorizeBody must be a function`);
    }
  });
  scope.addHook("preParsing", async (request) => {
    const { authorize } = request.routeOptions.config;
    if (!authorize || request.is404) return;
    // Ids that cannot exist stay 404 (and bad queries 400) after auth, as before.
    if (!partValid(request, "params", request.params) || !partValid(request, "querystring", request.query)) return;
    await refuseEarly(authorize, request);
  });
  scope.addHook("preValidation", async (request) => {
    const { authorizeBody } = request.routeOptions.config;
    if (!authorizeBody || request.is404) return;
    await refuseEarly(authorizeBody, request);
  });
}

/** The `app_id` a JSON body names, if it names one. */
export function bodyAppId(request: FastifyRequest): string | undefined {
  const body = request.body as { app_id?: unknown } | null | undefined;
  return body && typeof body === "object" && typeof body.app_id === "string" ? body.app_id : undefined;
}

/** The app of `{app_id}` in the path. */
export const appInPath =
  (apps: AppDirectory): Authorize =>
  (request) =>
    apps.authorized(principalOf(request), (request.params as { app_id: string }).app_id);

/** The app a list's `app_id` query parameter names (an app key's own app by default). */
export const appInQuery =
  (apps: AppDirectory): Authorize =>
  (request) => {
    const principal = principalOf(request);
    return apps.authorized(principal, listAppId(principal, (request.query as { app_id?: string }).app_id));
  };

/** The app the body's `app_id` names, when it names one (a missing one is the schema's 400). */
export const appInBody =
  (apps: AppDirectory): Authorize =>
  async (request) => {
    const appId = bodyAppId(request);
    if (appId !== undefined) await apps.authorized(principalOf(request), appId);
  };
