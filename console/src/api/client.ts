import { accessToken, refreshNow } from "../auth/session";
import { devApiKey } from "../auth/dev-api-key";

/** An error answer of the API: its `error` name, readable `message` and HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Readable text for any failure, the API's own `message` when there is one. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return "The gateway could not be reached. Check your connection and try again.";
  return err instanceof Error ? err.message : String(err);
}

async function bearer(): Promise<string | undefined> {
  if (import.meta.env.DEV) {
    const key = devApiKey();
    if (key) return key;
  }
  return accessToken();
}

async function send(method: string, path: string, body: unknown, token: string | undefined): Promise<Response> {
  return fetch(path, {
    method,
    headers: {
      Accept: "application/json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Calls the REST API with the session's access token; a 401 refreshes once and retries. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response = await send(method, path, body, await bearer());
  if (response.status === 401) {
    const renewed = await refreshNow();
    if (renewed) response = await send(method, path, body, renewed.accessToken);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const e = (json ?? {}) as { error?: string; message?: string };
    throw new ApiError(
      response.status,
      e.error ?? `HTTP ${response.status}`,
      e.message ?? `The request failed (${response.status} ${response.statusText}).`,
    );
  }
  return json as T;
}

export const get = <T>(path: string) => api<T>("GET", path);

export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}
