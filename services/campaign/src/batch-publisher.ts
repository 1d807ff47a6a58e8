import { toBinary } from "@bufbuild/protobuf";
import type { JetStreamClient } from "@nats-io/jetstream";
import { DeliveryBatchSchema, type DeliveryBatch } from "@herald/proto/delivery";
import { ATTR, natsHeaders, tracedPublish, type StreamNames } from "@herald/runtime";
import { batchMsgId } from "./batch-builder.js";
import type { PlatformName } from "./campaign.js";

export interface PublishResult {
  /** The stream already held a message with this batch's id: the earlier publish got through. */
  duplicate: boolean;
}

export interface BatchPublisher {
  publish(platform: PlatformName, batch: DeliveryBatch): Promise<PublishResult>;
}

const PUBLISH_TIMEOUT_MS = 10_000;

/** Publishes to `delivery.<platform>` and waits for the stream's ack. */
export class JetStreamBatchPublisher implements BatchPublisher {
  constructor(
    private readonly js: JetStreamClient,
    private readonly names: StreamNames,
  ) {}

  async publish(platform: PlatformName, batch: DeliveryBatch): Promise<PublishResult> {
    const subject = this.names.delivery(platform);
    const headers = natsHeaders();
    const attributes = {
      [ATTR.campaignId]: batch.campaignId,
      [ATTR.appId]: batch.appId,
      [ATTR.platform]: platform,
      [ATTR.batchSize]: batch.targets.length,
      [ATTR.batchSequence]: Number(batch.sequence),
    };
    const ack = await tracedPublish(`delivery.${platform}`, subject, attributes, headers, () =>
      this.js.publish(subject, toBinary(DeliveryBatchSchema, batch), {
        msgID: batchMsgId(batch.campaignId, Number(batch.sequence)),
        timeout: PUBLISH_TIMEOUT_MS,
        headers,
      }),
    );
    return { duplicate: ack.duplicate };
  }
}
