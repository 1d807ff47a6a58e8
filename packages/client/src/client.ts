import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.js";

export type HeraldClient = Client<paths, "application/json">;

/** A bearer token, or a function that returns the current one (session tokens expire). */
export type TokenSource = string | (() => string | Promise<string>);

export type HeraldClientOptions = {
  /** The gateway's origin, e.g. https://herald.example.com (paths start with /v1). */
  baseUrl: string;
  /** Custom fetch (tests, proxies, instrumentation); the global fetch otherwise. */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
} & (
  | { /** A server API key (`hk_live_…`). */ apiKey: string; accessToken?: never }
  | { /** A session access token from the gateway's OAuth server. */ accessToken: TokenSource; apiKey?: never }
);

/**
 * A typed client of Herald's REST API: every path, parameter and body of the gateway's
 * OpenAPI document, with the bearer token and JSON headers on every request.
 * Calls resolve to openapi-fetch's `{ data, error, response }`; `unwrap()` turns an
 * error answer into a thrown HeraldError.
 */
export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  const token: TokenSource | undefined = options.apiKey ?? options.accessToken;
  if (!token) throw new TypeError("createHeraldClient: give apiKey or accessToken");
  if (!URL.canParse(options.baseUrl)) throw new TypeError("createHeraldClient: baseUrl must be an absolute URL");
  const client = createClient<paths, "application/json">({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { Accept: "application/json", ...options.headers },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use({
    async onRequest({ request }) {
      const current = typeof token === "function" ? await token() : token;
      request.headers.set("Authorization", `Bearer ${current}`);
      return request;
    },
  });
  return client;
}
