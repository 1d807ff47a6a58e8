import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { DeliveryBatchSchema, OutcomeBatchSchema, OutcomeKind } from "@herald/proto/delivery";
import { type PlatformSubject, streamNames } from "@herald/runtime";
import { inject } from "vitest";

const PLATFORMS: readonly PlatformSubject[] = ["ios", "android", "web"];

/** What the double answers for one device: the outcome a provider would have caused. */
export interface ScriptedOutcome {
  kind: OutcomeKind;
  reason: string;
  attempts: number;
}

/**
 * The senders' side of the gateway test stack (which runs no sender): takes the delivery
 * batches fan-out published on the namespace's work queue and answers each with an
 * OutcomeBatch, as a sender does (msgID `<campaign>.<platform>.<sequence>`), so the
 * campaign service records real receipts.
 */
export async function senderDouble(namespace: string) {
  const names = streamNames(namespace);
  const nc = await connect({ servers: inject("infra").natsUrl });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  for (const platform of PLATFORMS) {
    await jsm.consumers.add(names.deliveryStream, {
      durable_name: `test-sender-${platform}`,
      filter_subject: names.delivery(platform),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
  }

  return {
    /** Answers every batch waiting now; answers how many devices it answered. */
    async answer(outcomeOf: (deviceId: string) => ScriptedOutcome): Promise<number> {
      let devices = 0;
      for (const platform of PLATFORMS) {
        const consumer = await js.consumers.get(names.deliveryStream, `test-sender-${platform}`);
        for (let pending = (await consumer.info()).num_pending; pending > 0; ) {
          const messages = await consumer.fetch({ max_messages: Math.min(pending, 100), expires: 2_000 });
          for await (const m of messages) {
            const batch = fromBinary(DeliveryBatchSchema, m.data);
            const outcomes = create(OutcomeBatchSchema, {
              campaignId: batch.campaignId,
              sequence: batch.sequence,
              platform: batch.platform,
              outcomes: batch.targets.map((t) => ({ deviceId: t.deviceId, ...outcomeOf(t.deviceId) })),
            });
            await js.publish(names.outcome(batch.campaignId), toBinary(OutcomeBatchSchema, outcomes), {
              msgID: `${batch.campaignId}.${platform}.${batch.sequence}`,
            });
            devices += batch.targets.length;
            await m.ackAck();
          }
          pending = (await consumer.info()).num_pending;
        }
      }
      return devices;
    },
    close: () => nc.close(),
  };
}

export const delivered: ScriptedOutcome = { kind: OutcomeKind.DELIVERED, reason: "", attempts: 1 };
