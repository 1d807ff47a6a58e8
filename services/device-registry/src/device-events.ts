import { randomUUID } from "node:crypto";
import { type OutboxEvent, webhookOutboxEvent } from "@herald/runtime";
import type { DevicePlatform } from "./push-token.js";

// The registry's webhook events (packages/runtime/src/webhook-events.ts), each written to
// the outbox in the transaction of the change it announces (device-store.ts).

interface DeviceIdentity {
  id: string;
  app_id: string;
  platform: DevicePlatform;
  external_id: string | null;
}

const deviceData = (d: DeviceIdentity) => ({
  device_id: d.id,
  app_id: d.app_id,
  platform: d.platform,
  external_id: d.external_id,
});

/**
 * device.opted_in / device.opted_out, for a device whose opted_in changed at `at`. Every
 * change is a new thing to announce (a device may opt out, in and out again): a random id.
 */
export function optInChangedEvent(d: DeviceIdentity & { opted_in: boolean }, at: Date): OutboxEvent {
  const type = d.opted_in ? "device.opted_in" : "device.opted_out";
  return webhookOutboxEvent({
    id: `${type}.${randomUUID()}`,
    type,
    appId: d.app_id,
    timestamp: at,
    data: deviceData(d),
  });
}

/**
 * device.invalidated, for a device marked invalid at `invalidated_at` on a provider's
 * verdict observed at `observed_at`. The id names the device and the observation, so the
 * same verdict delivered twice is one event.
 */
export function invalidatedEvent(
  d: DeviceIdentity & { reason: string; observed_at: Date; invalidated_at: Date },
): OutboxEvent {
  return webhookOutboxEvent({
    id: `device.invalidated.${d.id}.${d.observed_at.getTime()}`,
    type: "device.invalidated",
    appId: d.app_id,
    timestamp: d.invalidated_at,
    data: { ...deviceData(d), reason: d.reason },
  });
}

export interface UserErased {
  appId: string;
  externalId: string;
  devices: number;
  /** What the caller erased elsewhere (the campaign service's receipts and engagement). */
  receipts: number;
  engagements: number;
  inAppStates: number;
  /** Campaign (the caller's count) and in-app message audiences the external id was removed from. */
  audiences: number;
}

/** user.erased: an erasure that removed something; each is its own event. */
export function userErasedEvent(e: UserErased, at: Date): OutboxEvent {
  return webhookOutboxEvent({
    id: `user.erased.${randomUUID()}`,
    type: "user.erased",
    appId: e.appId,
    timestamp: at,
    data: {
      app_id: e.appId,
      external_id: e.externalId,
      devices: e.devices,
      receipts: e.receipts,
      engagements: e.engagements,
      in_app_states: e.inAppStates,
      audiences: e.audiences,
    },
  });
}
