import { toBinary } from "@bufbuild/protobuf";
import type { JetStreamClient } from "@nats-io/jetstream";
import { DeliveryBatchSchema, type DeliveryBatch } from "@herald/proto/delivery";
import type { StreamNames } from "@herald/runtime";
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
    const ack = await this.js.publish(this.names.delivery(platform), toBinary(DeliveryBatchSchema, batch), {
      msgID: batchMsgId(batch.campaignId, Number(batch.sequence)),
      timeout: PUBLISH_TIMEOUT_MS,
    });
    return { duplicate: ack.duplicate };
  }
}
