import { Platform } from "@herald/proto/common";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import {
  type Delivery,
  type ExportDeliveriesResponse,
  type ReceiptColumns,
  ReceiptColumnsSchema,
} from "@herald/proto/campaign";
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

/** What the registry knows of a device a receipt names (its DeviceRef, as it answered). */
export interface DeviceFacts {
  /** Empty when the device has none. */
  externalId: string;
  platform: Platform;
}

/** Device ids per LookupDevices call (the registry's maximum). */
export const LOOKUP_MAX = 1_000;

/**
 * The registry's facts about these devices of the app, in one LookupDevices call (at most
 * LOOKUP_MAX distinct ids); devices that no longer exist are absent from the map. The
 * answer's own objects are the map's values (an export looks up a million of them).
 */
export async function lookUpDevices(
  devices: DeviceClient,
  appId: string,
  deviceIds: readonly string[],
): Promise<Map<string, DeviceFacts>> {
  const ids = [...new Set(deviceIds)];
  const facts = new Map<string, DeviceFacts>();
  if (ids.length === 0) return facts;
  if (ids.length > LOOKUP_MAX) throw new Error(`LookupDevices takes at most ${LOOKUP_MAX} ids, not ${ids.length}`);
  const res = await devices.lookupDevices({ appId, deviceIds: ids });
  for (const d of res.devices) facts.set(d.id, d);
  return facts;
}

/**
 * A receipt's platform. Receipts recorded before they carried one (migration
 * 006_receipt_batches.sql stores 0 for those) take the device's, when it still exists.
 */
function receiptPlatform(platform: Platform, device: DeviceFacts | undefined): PlatformName | null {
  if (platform !== Platform.UNSPECIFIED) return platformName(platform);
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
    external_id: device?.externalId || null,
    platform: receiptPlatform(d.platform, device),
    outcome: outcomeName(d.outcome),
    reason: d.reason || null,
    attempts: d.attempts,
    at: iso(d.at),
  };
}

/**
 * An export chunk's receipts as columns, whichever way the campaign service answered:
 * today's answers the columns the gateway asks for; one of an earlier release, during a
 * rolling upgrade, answers a Delivery message per receipt.
 */
export function chunkColumns(res: ExportDeliveriesResponse): ReceiptColumns {
  if (res.columns) return res.columns;
  const d = res.deliveries;
  return create(ReceiptColumnsSchema, {
    deviceIds: d.map((r) => r.deviceId),
    platforms: d.map((r) => r.platform),
    outcomes: d.map((r) => r.outcome),
    reasons: d.map((r) => r.reason),
    attempts: d.map((r) => r.attempts),
    recordedAtMs: d.map((r) => (r.at ? timestampMs(r.at) : Number.NaN)),
  });
}

/** Receipt i of export columns, as deliveryView shows a Delivery. */
export function columnView(c: ReceiptColumns, i: number, device: DeviceFacts | undefined): DeliveryJson {
  return {
    device_id: c.deviceIds[i]!,
    external_id: device?.externalId || null,
    platform: receiptPlatform(c.platforms[i]!, device),
    outcome: outcomeName(c.outcomes[i]!),
    reason: c.reasons[i] || null,
    attempts: c.attempts[i]!,
    at: isoOfMs(c.recordedAtMs[i]!),
  };
}

/**
 * A time in ms as ISO 8601, remembering the last answer: the receipts of one delivery
 * batch share their time, so an export formats a date once per batch, not per receipt.
 */
let lastTime = { ms: Number.NaN, text: "" };
function isoOfMs(ms: number): string {
  if (ms !== lastTime.ms) {
    if (!Number.isFinite(ms)) throw new Error("timestamp missing from backend response");
    lastTime = { ms, text: new Date(ms).toISOString() };
  }
  return lastTime.text;
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
