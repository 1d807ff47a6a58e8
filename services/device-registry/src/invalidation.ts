import { fromTimestamp } from "@herald/runtime";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { isUuid } from "./ids.js";
import type { Invalidation } from "./device-store.js";

const MAX_REASON_LENGTH = 200;
/** Postgres timestamptz cannot hold every Date; no provider observes before 1970 or after 9999. */
const EARLIEST = 0;
const LATEST = Date.UTC(9999, 11, 31);

export type InvalidationCheck = { ok: true; invalidation: Invalidation } | { ok: false; problem: string };

/**
 * One invalidation, from the InvalidateDevices RPC or a device.invalidated event, as the
 * store takes it; or what is wrong with it, naming the field. Checked here so that one
 * bad entry can never fail the batched statement it would share with good ones.
 */
export function toInvalidation(inv: { deviceId: string; observedAt?: Timestamp; reason: string }): InvalidationCheck {
  if (!isUuid(inv.deviceId)) return { ok: false, problem: "device_id must be a device id" };
  if (!inv.observedAt) return { ok: false, problem: "observed_at is required" };
  const observedAt = fromTimestamp(inv.observedAt);
  const time = observedAt.getTime();
  if (!(time >= EARLIEST && time <= LATEST))
    return { ok: false, problem: "observed_at must be a time between 1970 and 9999" };
  return {
    ok: true,
    invalidation: { deviceId: inv.deviceId, observedAt, reason: inv.reason.slice(0, MAX_REASON_LENGTH) },
  };
}
