import { isRetryable, RETRY, retryAfterMs, retryDelayMs } from "./backoff.js";

/** What a library is configured with; the client key is publishable (hk_pub_…). */
export interface ApiConfig {
  baseUrl: string;
  appId: string;
  clientKey: string;
}

/** An answer Herald gave, or a network failure (status undefined) that outlasted the retries. */
export class HeraldError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    /** The API's error name (`ValidationError`, `Forbidden`, …), or "NetworkError". */
    readonly code: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = "HeraldError";
  }
}

export interface RequestOptions {
  body?: unknown;
  /** Proves possession of the device to a client key (X-Herald-Push-Token). */
  pushToken?: string;
  /** Fewer attempts where the caller's lifetime is short (a service worker event). */
  maxAttempts?: number;
}

const TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One REST call with the retry rules of docs/sdk-protocol.md §5: network errors, 408,
 * 429 and 5xx are retried with exponential full-jitter back-off (Retry-After is a floor);
 * any other answer is final. Resolves with the JSON body (undefined for 204).
 */
export async function request<T>(config: ApiConfig, method: string, path: string, opts: RequestOptions = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${config.clientKey}`, accept: "application/json" };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.pushToken !== undefined) headers["x-herald-push-token"] = opts.pushToken;
  const url = `${config.baseUrl.replace(/\/+$/, "")}/v1${path}`;
  const attempts = opts.maxAttempts ?? RETRY.maxAttempts;
  for (let attempt = 0; ; attempt++) {
    let res: Response | undefined;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch {
      res = undefined;
    }
    if (res?.ok) return (res.status === 204 ? undefined : await res.json()) as T;
    if (!isRetryable(res?.status) || attempt + 1 >= attempts) throw await failure(res);
    await sleep(retryDelayMs(attempt, retryAfterMs(res?.headers.get("retry-after") ?? null)));
  }
}

async function failure(res: Response | undefined): Promise<HeraldError> {
  if (!res) return new HeraldError("Herald could not be reached", undefined, "NetworkError");
  const body = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
  return new HeraldError(
    body.message ?? `HTTP ${res.status}`,
    res.status,
    body.error ?? "HttpError",
    res.headers.get("x-request-id") ?? undefined,
  );
}
