import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { AnsweredFault } from "./faults.js";

/** The providers the simulator plays; "apns" and "fcm" join "webpush" as they are built. */
export const PLATFORMS = ["webpush"] as const;
export type Platform = (typeof PLATFORMS)[number];

export function isPlatform(s: string): s is Platform {
  return (PLATFORMS as readonly string[]).includes(s);
}

/** The TLS port serves HTTP/2 and, for clients like the `web-push` library, HTTP/1.1. */
export type ProviderRequest = Http2ServerRequest | IncomingMessage;
export type ProviderResponse = Http2ServerResponse | ServerResponse;

/** One simulated provider on the TLS port. */
export interface ProviderHandler {
  platform: Platform;
  /** Whether a request path belongs to this provider (e.g. `/wp/…`). */
  owns(pathname: string): boolean;
  handle(req: ProviderRequest, res: ProviderResponse, url: URL): Promise<void>;
  /** Answers an injected error or throttle the way this provider words its errors. */
  refuseWithFault(res: ProviderResponse, fault: AnsweredFault): void;
}
