import { trace } from "@herald/runtime";
import type { SendContext } from "./provider.js";

/**
 * Notes a provider's answer on the send's context (for the latency histogram's status)
 * and on the active provider-request span (the one BatchProcessor
 * opens per attempt): its host, HTTP status and the provider's own reason or error code
 * (APNs reason, FCM error code). Never the URL's path: a Web Push path is a secret.
 */
export function recordProviderResponse(
  ctx: Pick<SendContext<unknown>, "response">,
  origin: string,
  status: number,
  reason?: string,
): void {
  ctx.response = { status };
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  let host = "";
  try {
    host = new URL(origin).host;
  } catch {}
  span.setAttribute("server.address", host);
  span.setAttribute("http.response.status_code", status);
  if (reason) span.setAttribute("herald.provider.reason", reason.slice(0, 64));
}
