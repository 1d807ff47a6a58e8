import { create } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import {
  DeliveryBatchSchema,
  type DeliveryBatch,
  RenderedPayloadSchema,
  type RenderedPayload,
} from "@herald/proto/delivery";
import { clientFixture } from "./client-fixtures.js";

export interface PushPayloadCase {
  name: string;
  send: {
    campaign_id: string;
    contents: { en: { title: string; body: string } };
    data: Record<string, unknown>;
    image_url?: string;
    android_channel_id?: string;
    content_available?: boolean;
  };
  payload?: Record<string, unknown>;
  message?: Record<string, unknown>;
}

/** push-payloads.json's cases of one platform, each with the batch and the rendered payload (`rendered`) a sender gets for its send. */
export function pushPayloadCases(platform: "ios" | "android") {
  const cases = clientFixture<Record<"ios" | "android", PushPayloadCase[]>>("push-payloads.json")[platform];
  return cases.map((c) => {
    const batch: DeliveryBatch = create(DeliveryBatchSchema, {
      campaignId: c.send.campaign_id,
      appId: "fixture",
      platform: platform === "ios" ? Platform.IOS : Platform.ANDROID,
      sequence: 1n,
      imageUrl: c.send.image_url ?? "",
      notification: { contentAvailable: c.send.content_available, androidChannelId: c.send.android_channel_id },
    });
    const rendered: RenderedPayload = create(RenderedPayloadSchema, { index: 0, ...c.send.contents.en });
    return { ...c, batch, rendered };
  });
}
