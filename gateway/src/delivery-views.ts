import { Platform } from "@herald/proto/common";
import type { Delivery } from "@herald/proto/campaign";
import { OutcomeKind } from "@herald/proto/delivery";
import type { DeviceClient } from "./backends.js";
import { iso, platformName, type PlatformName } from "./views.js";

/**
 * Per-device receipts as JSON, in the conventions of views.ts: the outcome as a word, the
 * provider's reason null when there is none, the device's external id (from the registry,
 * null when it has none or no longer exists).
 */

export type OutcomeName = "delivered" | "failed" | "bounced" | "throttled";

const OUTCOME_NAMES: Partial<Record<OutcomeKind, OutcomeName>> = {
  [OutcomeKind.DELIVERED]: "delivered",
  [OutcomeKind.FAILED]: "failed",
  [OutcomeKind.BOUNCED]: "bounced",
  [OutcomeKind.THROTTLED]: "throttled",
};

const OUTCOME_BY_NAME = Object.fromEntries(
  Object.entries(OUTCOME_NAMES).map(([kind, name]) => [name, Number(kind)]),
) as Record<OutcomeName, OutcomeKind>;

export function outcomeName(kind: OutcomeKind): OutcomeName {
  const name = OUTCOME_NAMES[kind];
  if (!name) throw new Error(`unexpected delivery outcome ${kind}`);
  return name;
}

/** Unset: every outcome (UNSPECIFIED, the RPC's "no filter"). */
export const outcomeFromName = (name: OutcomeName | undefined): OutcomeKind =>
  name === undefined ? OutcomeKind.UNSPECIFIED : OUTCOME_BY_NAME[name];

/** What the registry knows of a device a receipt names. */
export interface DeviceFacts {
  externalId: string | null;
  platform: Platform;
}

/** Device ids per LookupDevices call (the registry's maximum). */
export const LOOKUP_MAX = 1_000;

/**
 * The registry's facts about these devices of the app, in one LookupDevices call (at most
 * LOOKUP_MAX distinct ids); devices that no longer exist are absent from the map.
 */
export async function lookUpDevices(
  devices: DeviceClient,
  appId: string,
  deviceIds: readonly string[],
): Promise<Map<string, DeviceFacts>> {
  const ids = [...new Set(deviceIds)];
  if (ids.length === 0) return new Map();
  if (ids.length > LOOKUP_MAX) throw new Error(`LookupDevices takes at most ${LOOKUP_MAX} ids, not ${ids.length}`);
  const res = await devices.lookupDevices({ appId, deviceIds: ids });
  return new Map(res.devices.map((d) => [d.id, { externalId: d.externalId || null, platform: d.platform }]));
}

/**
 * A receipt's platform. Receipts recorded before they carried one (migration
 * 006_receipt_batches.sql stores 0 for those) take the device's, when it still exists.
 */
function receiptPlatform(d: Delivery, device: DeviceFacts | undefined): PlatformName | null {
  if (d.platform !== Platform.UNSPECIFIED) return platformName(d.platform);
  return device && device.platform !== Platform.UNSPECIFIED ? platformName(device.platform) : null;
}

/** One receipt of a campaign (GET /v1/campaigns/{id}/deliveries, and each line or row of the export). */
export interface DeliveryJson {
  device_id: string;
  external_id: string | null;
  platform: PlatformName | null;
  outcome: OutcomeName;
  reason: string | null;
  attempts: number;
  at: string;
}

export function deliveryView(d: Delivery, device: DeviceFacts | undefined): DeliveryJson {
  return {
    device_id: d.deviceId,
    external_id: device?.externalId ?? null,
    platform: receiptPlatform(d, device),
    outcome: outcomeName(d.outcome),
    reason: d.reason || null,
    attempts: d.attempts,
    at: iso(d.at),
  };
}

/** One receipt of a device (GET /v1/devices/{id}/deliveries). */
export interface DeviceDeliveryJson {
  campaign_id: string;
  platform: PlatformName;
  outcome: OutcomeName;
  reason: string | null;
  attempts: number;
  at: string;
}

/** `device`: the registry's own record (the route found it), so the platform is always known. */
export function deviceDeliveryView(d: Delivery, device: { platform: Platform }): DeviceDeliveryJson {
  return {
    campaign_id: d.campaignId,
    platform: platformName(d.platform !== Platform.UNSPECIFIED ? d.platform : device.platform),
    outcome: outcomeName(d.outcome),
    reason: d.reason || null,
    attempts: d.attempts,
    at: iso(d.at),
  };
}
