import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Connection } from "./connections.js";
import type { AnsweredFault } from "./faults.js";

/** The providers the simulator plays. */
export const PLATFORMS = ["webpush", "apns", "fcm"] as const;
export type Platform = (typeof PLATFORMS)[number];

export function isPlatform(s: string): s is Platform {
  return (PLATFORMS as readonly string[]).includes(s);
}

/** The TLS port serves HTTP/2 and, for clients like the `web-push` library, HTTP/1.1. */
export type ProviderRequest = Http2ServerRequest | IncomingMessage;
export type ProviderResponse = Http2ServerResponse | ServerResponse;

/** One simulated provider endpoint on the TLS port. */
export interface ProviderHandler {
  /**
   * The platform whose faults, stream rules and request stats apply. Null for a helper
   * endpoint that is not itself a push provider (the FCM OAuth token endpoint): it is
   * never faulted and counts only in the totals.
   */
  platform: Platform | null;
  /** Whether a request path belongs to this provider (e.g. `/wp/…`). */
  owns(pathname: string): boolean;
  /** `conn` is the HTTP/2 connection; undefined for HTTP/1.1. */
  handle(req: ProviderRequest, res: ProviderResponse, url: URL, conn: Connection | undefined): Promise<void>;
  /** Answers an injected error, throttle or shutdown the way this provider words its errors. */
  refuseWithFault(req: ProviderRequest, res: ProviderResponse, fault: AnsweredFault): void;
}
