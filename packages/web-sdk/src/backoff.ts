/**
 * When to retry a request, and how long to wait first: the rules of docs/sdk-protocol.md
 * §5, shared by the page and the service worker.
 */
export const RETRY = {
  /** Attempts per call before giving up until the next start or network change. */
  maxAttempts: 8,
  baseMs: 1_000,
  capMs: 5 * 60_000,
} as const;

/** Network errors (status undefined), 408, 429 and 5xx are worth another try; other answers are final. */
export function isRetryable(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/** Retry-After as milliseconds: integer seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before retry `attempt` (0 for the first retry): exponential with full jitter,
 * and never sooner than the server's Retry-After, plus up to 10 % so that clients limited
 * together do not come back together.
 */
export function retryDelayMs(attempt: number, retryAfter: number | undefined, random = Math.random): number {
  const exponential = random() * Math.min(RETRY.capMs, RETRY.baseMs * 2 ** attempt);
  if (retryAfter === undefined) return exponential;
  return Math.max(exponential, retryAfter * (1 + random() * 0.1));
}
