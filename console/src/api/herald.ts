import { createHeraldClient, HeraldError } from "@herald/client";
import { devApiKey } from "../auth/dev-api-key";
import { accessToken, refreshNow } from "../auth/session";

/** The session's access token; in development, an API key typed on the sign-in screen stands in. */
async function bearer(): Promise<string> {
  if (import.meta.env.DEV) {
    const key = devApiKey();
    if (key) return key;
  }
  return (await accessToken()) ?? "";
}

/**
 * Sends a request of the client; a 401 refreshes the session once and sends it again
 * with the new access token. Without a token, no Authorization header goes at all.
 */
async function sendWithRefresh(request: Request): Promise<Response> {
  // Read once, so that a retry sends the same bytes (and the browser sends bytes, not a stream).
  const body = request.body ? await request.arrayBuffer() : undefined;
  const send = (authorization: string | null) => {
    const headers = new Headers(request.headers);
    if (authorization && authorization !== "Bearer ") headers.set("Authorization", authorization);
    else headers.delete("Authorization");
    return fetch(new Request(request, { headers, body }));
  };
  const response = await send(request.headers.get("Authorization"));
  if (response.status !== 401) return response;
  const renewed = await refreshNow();
  return renewed ? send(`Bearer ${renewed.accessToken}`) : response;
}

/** The REST API, as the signed-in user: `unwrap(await herald.GET("/v1/apps/{app_id}", …))`. */
export const herald = createHeraldClient({ baseUrl: location.origin, accessToken: bearer, fetch: sendWithRefresh });

/** Readable text for any failure, the API's own `message` when there is one. */
export function errorMessage(err: unknown): string {
  if (err instanceof HeraldError) {
    // An answer without the API's error body (a proxy's page): its status line.
    return err.error === "HttpError" ? `The request failed (${err.message}).` : err.message;
  }
  if (err instanceof TypeError) return "The gateway could not be reached. Check your connection and try again.";
  return err instanceof Error ? err.message : String(err);
}
