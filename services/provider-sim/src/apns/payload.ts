import { ok, refuse, type Checked } from "../refusal.js";
import type { PushType } from "./request-headers.js";

export const MAX_PAYLOAD_BYTES = 4096;
export const MAX_VOIP_PAYLOAD_BYTES = 5120;

export function payloadLimit(pushType: PushType | null): number {
  return pushType === "voip" ? MAX_VOIP_PAYLOAD_BYTES : MAX_PAYLOAD_BYTES;
}

/**
 * The body: a JSON object with an `aps` object ("This dictionary must contain another
 * dictionary identified by the aps key"). Apple names no reason for a body that is not
 * such JSON; the simulator answers PayloadEmpty, as for an empty body: either way there
 * is no notification to deliver.
 *
 * The payload must match `apns-push-type` (Apple: "If there's a mismatch … APNs may
 * return an error"), answered InvalidPushType: an alert push must alert, badge or play
 * a sound; a background push must set `content-available: 1`. Without the header Apple
 * infers the type, so nothing is matched.
 */
export function checkPayload(body: Buffer, pushType: PushType | null): Checked<Record<string, unknown>> {
  if (body.length === 0) return refuse(400, "PayloadEmpty");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return refuse(400, "PayloadEmpty");
  }
  if (!isObject(parsed) || !isObject(parsed.aps)) return refuse(400, "PayloadEmpty");
  const aps = parsed.aps;
  if (pushType === "alert" && aps.alert === undefined && aps.badge === undefined && aps.sound === undefined) {
    return refuse(400, "InvalidPushType");
  }
  if (pushType === "background" && aps["content-available"] !== 1) return refuse(400, "InvalidPushType");
  return ok(parsed);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
