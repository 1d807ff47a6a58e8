import { createHash, randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { inject } from "vitest";
import { CampaignService } from "@herald/proto/campaign";
import { Platform } from "@herald/proto/common";
import { DeliveryBatchSchema, OutcomeBatchSchema, OutcomeKind, type DeliveryBatch } from "@herald/proto/delivery";
import { DeviceRegistryService } from "@herald/proto/device";
import {
  createLogger,
  createPool,
  createRpcClient,
  deliveryStreamConfig,
  ensureStream,
  outcomesStreamConfig,
  readEnv,
  streamNames,
  type Pool,
} from "@herald/runtime";
import { dropServiceData, serviceTestEnv } from "../../../test/support/service-env.js";
import { uniqueName } from "../../../test/support/unique.js";
import { suiteFixture } from "../../../test/support/suite-fixture.js";
import { waitForValue } from "../../../test/support/wait.js";
import { configSpec as registryConfigSpec } from "../../device-registry/src/config.js";
import { start as startRegistry } from "../../device-registry/src/server.js";
import type { PlatformName } from "../src/campaign.js";
import { configSpec } from "../src/config.js";
import { start as startCampaign } from "../src/server.js";

export const PLATFORMS: readonly PlatformName[] = ["ios", "android", "web"];

export interface SeedDevice {
  platform: PlatformName;
  language?: string | null;
  externalId?: string | null;
  tags?: string[];
  optedIn?: boolean;
  invalid?: boolean;
}

export interface SeededDevice extends SeedDevice {
  id: string;
  pushToken: string;
  targetable: boolean;
}

export interface ReceivedBatch {
  batch: DeliveryBatch;
  subject: string;
}

/**
 * A real device registry and campaign service (their start()), each on its own schema,
 * sharing one fresh NATS namespace; the test plays the senders on the delivery stream.
 */
export async function startStack() {
  const infra = inject("infra");
  const namespace = uniqueName("cmp");
  const names = streamNames(namespace);
  const registrySchema = uniqueName("cmp_dev");
  const campaignSchema = uniqueName("cmp");
  const log = (name: string) => createLogger(name, process.env.TEST_LOG_LEVEL ?? "silent");

  const registry = await startRegistry(
    readEnv(
      registryConfigSpec,
      serviceTestEnv(infra, { schema: registrySchema, namespace }, { HERALD_WEBPUSH_ALLOW_PRIVATE: "1" }),
    ),
    { log: log("device-registry") },
  );
  const registryRpc = createRpcClient(DeviceRegistryService, `http://127.0.0.1:${registry.port}`, {
    timeoutMs: 30_000,
  });
  const registryPool: Pool = createPool({ url: infra.databaseUrl, schema: registrySchema, max: 2 });
  const campaignPool: Pool = createPool({ url: infra.databaseUrl, schema: campaignSchema, max: 2 });
  const nc: NatsConnection = await connect({ servers: infra.natsUrl });
  const jsm: JetStreamManager = await jetstreamManager(nc);
  const js = jetstream(nc);
  const instances = new Set<{ close(): Promise<void> }>();

  /** One campaign service instance; several may run on the same schema and namespace. */
  async function startInstance(env: Record<string, string> = {}) {
    const app = await startCampaign(
      readEnv(
        configSpec,
        serviceTestEnv(
          infra,
          { schema: campaignSchema, namespace },
          { DEVICE_REGISTRY_URL: `http://127.0.0.1:${registry.port}`, SCHEDULER_INTERVAL_MS: "200", ...env },
        ),
      ),
      { log: log("campaign") },
    );
    const rpc = createRpcClient(CampaignService, `http://127.0.0.1:${app.port}`, { timeoutMs: 30_000 });
    const instance = {
      app,
      client: rpc.client,
      /** A counter of the instance's /metrics, summed over the series whose labels contain `labels`. */
      async metric(name: string, labels = ""): Promise<number> {
        const text = await (await fetch(`http://127.0.0.1:${app.adminPort}/metrics`)).text();
        return text
          .split("\n")
          .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(labels))
          .reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
      },
      async close() {
        instances.delete(instance);
        rpc.close();
        await app.close();
      },
    };
    instances.add(instance);
    return instance;
  }

  /** Devices straight into the registry's table: thousands in one statement. */
  async function seed(appId: string, devices: SeedDevice[]): Promise<SeededDevice[]> {
    const tokens = devices.map(() => `tok-${randomUUID()}`);
    const { rows } = await registryPool.query<{ id: string; push_token: string }>(
      `INSERT INTO devices (app_id, push_token, token_hash, platform, external_id, language, tags, opted_in, invalid)
       SELECT $1, t.token, t.hash, t.platform, t.external_id, t.language,
              ARRAY(SELECT jsonb_array_elements_text(t.tags::jsonb)), t.opted_in, t.invalid
       FROM unnest($2::text[], $3::bytea[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::bool[])
         AS t(token, hash, platform, external_id, language, tags, opted_in, invalid)
       RETURNING id, push_token`,
      [
        appId,
        tokens,
        tokens.map((t) => createHash("sha256").update(t).digest()),
        devices.map((d) => d.platform),
        devices.map((d) => d.externalId ?? null),
        devices.map((d) => d.language ?? null),
        devices.map((d) => JSON.stringify(d.tags ?? [])),
        devices.map((d) => d.optedIn ?? true),
        devices.map((d) => d.invalid ?? false),
      ],
    );
    const idByToken = new Map(rows.map((r) => [r.push_token, r.id]));
    return devices.map((d, i) => ({
      ...d,
      id: idByToken.get(tokens[i]!)!,
      pushToken: tokens[i]!,
      targetable: (d.optedIn ?? true) && !(d.invalid ?? false),
    }));
  }

  // The senders' side: pull consumers on delivery.<platform> (the stream is a work queue).
  await ensureStream(nc, deliveryStreamConfig(names), log("test-senders"));
  await ensureStream(nc, outcomesStreamConfig(names), log("test-senders"));
  for (const platform of PLATFORMS) {
    await jsm.consumers.add(names.deliveryStream, {
      durable_name: `test-sender-${platform}`,
      filter_subject: names.delivery(platform),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
  }

  /** Takes (and acks) every batch waiting in the delivery stream. */
  async function takeBatches(): Promise<ReceivedBatch[]> {
    const out: ReceivedBatch[] = [];
    for (const platform of PLATFORMS) {
      const consumer = await js.consumers.get(names.deliveryStream, `test-sender-${platform}`);
      for (
        let pending = (await consumer.info()).num_pending;
        pending > 0;
        pending = (await consumer.info()).num_pending
      ) {
        const messages = await consumer.fetch({ max_messages: Math.min(pending, 200), expires: 2_000 });
        for await (const m of messages) {
          out.push({ batch: fromBinary(DeliveryBatchSchema, m.data), subject: m.subject });
          await m.ackAck();
        }
      }
    }
    return out;
  }

  /** Answers batches like a sender: one OutcomeBatch per batch, msgID <campaign>.<platform>.<sequence>. */
  async function answer(
    batches: ReceivedBatch[],
    kindOf: (deviceId: string) => OutcomeKind = () => OutcomeKind.DELIVERED,
    msgSuffix = "",
  ) {
    for (const { batch } of batches) {
      const platform = PLATFORMS[batch.platform - 1]!;
      const outcomes = create(OutcomeBatchSchema, {
        campaignId: batch.campaignId,
        sequence: batch.sequence,
        platform: batch.platform,
        outcomes: batch.targets.map((t) => {
          const kind = kindOf(t.deviceId);
          return { deviceId: t.deviceId, kind, reason: kind === OutcomeKind.DELIVERED ? "" : "Test", attempts: 1 };
        }),
      });
      await js.publish(names.outcome(batch.campaignId), toBinary(OutcomeBatchSchema, outcomes), {
        msgID: `${batch.campaignId}.${platform}.${batch.sequence}${msgSuffix}`,
      });
    }
  }

  /** The campaign row as stored, including the fan-out columns the API does not show. */
  async function row(campaignId: string) {
    const { rows } = await campaignPool.query("SELECT * FROM campaigns WHERE id = $1", [campaignId]);
    return rows[0] as Record<string, unknown> & {
      status: string;
      fanout_done: boolean;
      published_count: string;
      audience_size: string;
      pending_batch: unknown;
    };
  }

  /** True once the outcome consumer has nothing pending or unacked. */
  async function outcomesSettled(): Promise<boolean> {
    const info = await jsm.consumers.info(names.outcomesStream, names.consumer("campaign-outcomes"));
    return info.num_pending === 0 && info.num_ack_pending === 0;
  }

  /** Removes the test's schemas and streams, even after a failed test. */
  async function dropAll() {
    for (const pool of [registryPool, campaignPool]) await pool.end();
    await nc.close();
    await dropServiceData(infra, [registrySchema, campaignSchema], namespace);
  }

  return {
    names,
    nc,
    js,
    jsm,
    registry: registryRpc.client,
    campaignPool,
    startInstance,
    seed,
    takeBatches,
    answer,
    row,
    outcomesSettled,
    async stop() {
      try {
        for (const instance of [...instances]) await instance.close();
        registryRpc.close();
        await registry.close();
      } finally {
        await dropAll();
      }
    },
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;
/** A campaign service instance of the stack (startInstance). */
export type Instance = Awaited<ReturnType<Stack["startInstance"]>>;
export type CampaignClient = Instance["client"];

/** The stack of a test file or describe block: started before its tests, stopped after (suiteFixture). */
export function useStack(): Stack {
  return suiteFixture(startStack, (stack) => stack.stop());
}

/** The registry's platform names as the protos number them. */
export const PLATFORM_OF = { ios: Platform.IOS, android: Platform.ANDROID, web: Platform.WEB } as const;

/** Mixed outcomes to answer batches with: about half delivered, the rest failed, bounced or throttled. */
export const MIXED_OUTCOMES = [
  OutcomeKind.DELIVERED,
  OutcomeKind.FAILED,
  OutcomeKind.BOUNCED,
  OutcomeKind.THROTTLED,
  OutcomeKind.DELIVERED,
];

/** Polls until check returns a value other than undefined/false, and answers it. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  what = "condition",
): Promise<T> {
  return (await waitForValue(what, check, (v) => v !== undefined && v !== false, { timeoutMs, everyMs: 50 })) as T;
}

/** Devices in the batches, with the payload each got; throws if a device is in two batches. */
export function targetsOf(
  batches: ReceivedBatch[],
): Map<string, { title: string; body: string; platform: number; seq: bigint }> {
  const out = new Map<string, { title: string; body: string; platform: number; seq: bigint }>();
  for (const { batch } of batches) {
    const payloads = new Map(batch.payloads.map((p) => [p.index, p]));
    for (const t of batch.targets) {
      if (out.has(t.deviceId)) throw new Error(`device ${t.deviceId} is in two batches`);
      const p = payloads.get(t.payloadIndex);
      if (!p) throw new Error(`batch ${batch.sequence} lacks payload ${t.payloadIndex}`);
      out.set(t.deviceId, { title: p.title, body: p.body, platform: batch.platform, seq: batch.sequence });
    }
  }
  return out;
}
