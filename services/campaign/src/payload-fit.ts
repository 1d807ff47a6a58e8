import { create } from "@bufbuild/protobuf";
import { RenderedPayloadSchema } from "@herald/proto/delivery";
import { failedPrecondition } from "@herald/runtime";
import {
  buildNotification,
  DEFAULT_ALERT_OPTIONS,
  MAX_PAYLOAD_BYTES as APNS_MAX_BYTES,
  parseData,
} from "@herald/sender-apns/payload";
import { fcmData, fcmMessage, MAX_PAYLOAD_BYTES as FCM_MAX_BYTES, payloadBytes } from "@herald/sender-fcm/payload";
import { MAX_PAYLOAD_BYTES as WEB_MAX_BYTES, webPushPayload } from "@herald/sender-webpush/payload";
import { buildDeliveryBatch } from "./batch-builder.js";
import type { NewCampaign } from "./campaign.js";

/** As long as a real campaign id (a UUID), which every payload carries. */
const SAMPLE_CAMPAIGN_ID = "00000000-0000-0000-0000-000000000000";

/**
 * Each language's notification, built by each platform's own sender code (the bytes a
 * device would get), must fit that provider's limit: a campaign that cannot reach some
 * of its devices is refused when it is created (422), not failed device by device after
 * the 202. Checked for every platform whatever the audience holds: which platforms it
 * reaches is only known at fan-out. Not checked here: FCM's reserved data keys (they
 * fail Android sends only: `from` is a fine key for an iOS app). Every sender checks
 * every message again and fails one that does not fit as PayloadTooLarge.
 */
export function requirePayloadsFit(campaign: Pick<NewCampaign, "contents" | "dataJson" | "options">, now: Date): void {
  const { options } = campaign;
  const batch = buildDeliveryBatch(
    {
      campaignId: SAMPLE_CAMPAIGN_ID,
      appId: "",
      contents: campaign.contents,
      dataJson: campaign.dataJson,
      ttlSeconds: options.ttlSeconds,
      highPriority: options.priority === "high",
      collapseId: options.collapseId,
      imageUrl: options.imageUrl,
      notification: options.notification,
      createdAt: now,
    },
    "ios",
    0,
    [],
  );
  const apnsData = parseData(campaign.dataJson);
  const fcm = fcmData(campaign.dataJson);
  const ttl = options.ttlSeconds || undefined;
  for (const [lang, { title, body }] of Object.entries(campaign.contents)) {
    const payload = create(RenderedPayloadSchema, { index: 0, title, body });
    const tooLarge = (platform: string, limit: number) =>
      failedPrecondition(
        `payload too large for ${lang}: the ${platform} notification exceeds ${limit} bytes with data`,
      );
    if (Buffer.byteLength(JSON.stringify(webPushPayload(batch, payload))) > WEB_MAX_BYTES) {
      throw tooLarge("web", WEB_MAX_BYTES);
    }
    const apns = buildNotification(batch, payload, apnsData, "", DEFAULT_ALERT_OPTIONS);
    if (!apns.ok && apns.reason === "PayloadTooLarge") throw tooLarge("ios", APNS_MAX_BYTES);
    if (fcm.ok && payloadBytes(fcmMessage("", batch, payload, fcm.data, ttl)) > FCM_MAX_BYTES) {
      throw tooLarge("android", FCM_MAX_BYTES);
    }
  }
}
