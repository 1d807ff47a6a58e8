import { create } from "@bufbuild/protobuf";
import {
  DeliveryBatchSchema,
  RenderedPayloadSchema,
  type DeliveryBatch,
  type RenderedPayload,
} from "@herald/proto/delivery";
import { toTimestamp } from "@herald/runtime";
import { PLATFORM_ENUM, type AudienceDevice } from "./audience-source.js";
import { FALLBACK_LANGUAGE, type Contents, type NotificationOptions, type PlatformName } from "./campaign.js";
import { toNotificationMessage } from "./campaign-mapping.js";

/** What every delivery batch of one campaign carries besides its targets. */
export interface DeliveryContext {
  campaignId: string;
  appId: string;
  contents: Contents;
  dataJson: string;
  ttlSeconds: number;
  highPriority: boolean;
  collapseId?: string;
  imageUrl?: string;
  notification?: NotificationOptions;
  /** Where the providers' ttl starts counting. */
  createdAt: Date;
}

/** The contents entry a device gets: its own language, else the "en" fallback. */
export function contentLanguage(contents: Contents, language: string | undefined): string {
  return language !== undefined && Object.hasOwn(contents, language) ? language : FALLBACK_LANGUAGE;
}

/** The JetStream de-duplication id of a batch: a re-publish after a crash is dropped. */
export const batchMsgId = (campaignId: string, sequence: number): string => `${campaignId}.${sequence}`;

/**
 * One DeliveryBatch for the given devices (all of one platform). It carries only the
 * payloads its targets use, indexed in the order of first use.
 */
export function buildDeliveryBatch(
  ctx: DeliveryContext,
  platform: PlatformName,
  sequence: number,
  devices: readonly AudienceDevice[],
): DeliveryBatch {
  const indexByLanguage = new Map<string, number>();
  const payloads: RenderedPayload[] = [];
  const targets = devices.map((device) => {
    const lang = contentLanguage(ctx.contents, device.language);
    let index = indexByLanguage.get(lang);
    if (index === undefined) {
      index = payloads.length;
      indexByLanguage.set(lang, index);
      const { title, body } = ctx.contents[lang]!;
      payloads.push(create(RenderedPayloadSchema, { index, title, body }));
    }
    return { deviceId: device.id, pushToken: device.pushToken, payloadIndex: index };
  });
  return create(DeliveryBatchSchema, {
    campaignId: ctx.campaignId,
    appId: ctx.appId,
    platform: PLATFORM_ENUM[platform],
    sequence: BigInt(sequence),
    payloads,
    targets,
    dataJson: ctx.dataJson,
    ttlSeconds: ctx.ttlSeconds,
    highPriority: ctx.highPriority,
    collapseId: ctx.collapseId,
    imageUrl: ctx.imageUrl,
    notification: ctx.notification && toNotificationMessage(ctx.notification),
    createdAt: toTimestamp(ctx.createdAt),
  });
}
