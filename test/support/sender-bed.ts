import { randomBytes, randomUUID } from "node:crypto";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Platform } from "@herald/proto/common";
import {
  type DeliveryBatch,
  DeliveryBatchSchema,
  type DeviceInvalidated,
  DeviceInvalidatedSchema,
  type NotificationOptionsSchema,
  type OutcomeBatch,
  OutcomeBatchSchema,
} from "@herald/proto/delivery";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { configSpec as simConfigSpec } from "@herald/provider-sim/config";
import { type ProviderSim, start as startSim } from "@herald/provider-sim/server";
import { createLogger, readEnv, type StreamNames, streamNames } from "@herald/runtime";
import { inject } from "vitest";
import {
  cleanUp as cleanUpCredential,
  testConfig as credentialConfig,
  rawPool,
  type Running,
  startService as startCredential,
} from "../../services/credential/test/harness.js";
import { deleteNamespaceStreams } from "./nats-streams.js";
import { uniqueName } from "./unique.js";

export const log = createLogger("test", "silent");

/** A device as a delivery batch names it: its id and its push token. */
export interface Target {
  id: string;
  token: string;
}

export type Outcomes = OutcomeBatch["outcomes"];

/** A delivery batch's fields, as a test sets them; the bed fills in the rest. */
export type BatchFields = Partial<
  Pick<
    DeliveryBatch,
    "appId" | "campaignId" | "sequence" | "dataJson" | "ttlSeconds" | "collapseId" | "imageUrl" | "highPriority"
  >
> & {
  payloads?: { index: number; title: string; body: string }[];
  notification?: MessageInitShape<typeof NotificationOptionsSchema>;
};

/**
 * What a sender (APNs, FCM, Web Push) runs against in its integration tests: the real
 * credential service, JetStream, and the strict simulator as the push provider. Each test
 * file gets its own schema and NATS namespace; setUp() in beforeAll, tearDown() in afterAll.
 */
export class SenderTestBed {
  sim!: ProviderSim;
  admin!: SimAdminClient;
  credential!: Running;
  /** The organization the credential service made at start-up: the tests' apps belong to it. */
  orgId!: string;
  nc!: NatsConnection;
  readonly names: StreamNames;
  readonly namespace: string;
  private credCfg?: ReturnType<typeof credentialConfig>;

  /**
   * `platform`: the delivery stream's platform the sender consumes; `simEnv`: the
   * simulator's environment beyond its defaults (ports, silence, seed 7).
   */
  constructor(
    private readonly platform: "ios" | "android" | "web",
    private readonly simEnv: Record<string, string> = {},
  ) {
    this.namespace = uniqueName(`${platform}ns`);
    this.names = streamNames(this.namespace);
  }

  async setUp(): Promise<void> {
    const env = { PORT: "0", ADMIN_PORT: "0", LOG_LEVEL: "silent", SIM_SEED: "7", ...this.simEnv };
    this.sim = await startSim(readEnv(simConfigSpec, env), { log });
    this.admin = new SimAdminClient(`http://127.0.0.1:${this.sim.adminPort}`);
    this.credCfg = credentialConfig({ logLevel: "silent" });
    this.credential = await startCredential(this.credCfg);
    const pool = rawPool(this.credCfg);
    try {
      this.orgId = (await pool.query<{ id: string }>("SELECT id FROM orgs LIMIT 1")).rows[0]!.id;
    } finally {
      await pool.end();
    }
    this.nc = await connect({ servers: inject("infra").natsUrl });
  }

  async tearDown(): Promise<void> {
    await this.nc?.close();
    await this.credential?.close();
    await this.sim?.close();
    if (this.credCfg) await cleanUpCredential(this.credCfg);
    await deleteNamespaceStreams(inject("infra").natsUrl, this.namespace);
  }

  /** A sender's environment on this bed: fast retries (4 attempts), silent; `own` adds to it. */
  senderEnv(own: Record<string, string> = {}): Record<string, string> {
    return {
      NATS_URL: inject("infra").natsUrl,
      NATS_NAMESPACE: this.namespace,
      ADMIN_PORT: "0",
      CREDENTIAL_URL: `http://127.0.0.1:${this.credential.app.port}`,
      SENDER_RETRY_BASE_MS: "20",
      SENDER_RETRY_MAX_DELAY_MS: "100",
      SENDER_RETRY_MAX_ATTEMPTS: "4",
      LOG_LEVEL: "silent",
      ...own,
    };
  }

  /** A new app of the bed's organization; answers its id. */
  async createApp(platform: Platform, name: string, bundleId: string): Promise<string> {
    const app = await this.credential.client.createApp({ orgId: this.orgId, name, platform, bundleId });
    return app.app!.id;
  }

  /**
   * Publishes `targets` as delivery batches of one campaign (`fields.campaignId`, a new one
   * by default), at most `batchSize` targets each, numbered from `fields.sequence` (1); the
   * payloads are German and English alternating, with an action_url, for an hour, unless
   * `fields` says otherwise. Answers the campaign id.
   */
  async publish(targets: Target[], fields: BatchFields, batchSize = Math.max(targets.length, 1)): Promise<string> {
    // A field given as undefined keeps its default.
    const given = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as BatchFields;
    const campaignId = given.campaignId || randomUUID();
    const first = given.sequence ?? 1n;
    for (let b = 0; b * batchSize < Math.max(targets.length, 1); b++) {
      const batch = create(DeliveryBatchSchema, {
        payloads: [
          { index: 0, title: "Hallo", body: "Wie geht's?" },
          { index: 1, title: "Hello", body: "How are you?" },
        ],
        dataJson: JSON.stringify({ action_url: "https://example.com/a" }),
        ttlSeconds: 3600,
        createdAt: timestampFromDate(new Date()),
        ...given,
        campaignId,
        platform: PLATFORMS[this.platform],
        sequence: first + BigInt(b),
        targets: targets
          .slice(b * batchSize, (b + 1) * batchSize)
          .map((t, i) => ({ deviceId: t.id, pushToken: t.token, payloadIndex: i % 2 })),
      });
      await jetstream(this.nc).publish(this.names.delivery(this.platform), toBinary(DeliveryBatchSchema, batch), {
        msgID: `${campaignId}.${batch.sequence}`,
      });
    }
    return campaignId;
  }

  /** Reads every OutcomeBatch of a campaign until `expected` outcomes arrived (or `timeoutMs` passed). */
  outcomes(campaignId: string, expected: number, timeoutMs = 30_000): Promise<Outcomes> {
    return this.drain(
      this.names.outcomesStream,
      this.names.outcome(campaignId),
      (data) => fromBinary(OutcomeBatchSchema, data).outcomes,
      expected,
      timeoutMs,
    );
  }

  /** The device.invalidated events of this bed's namespace: until `expected` arrived, or for `timeoutMs`. */
  invalidations(expected = Number.POSITIVE_INFINITY, timeoutMs = 1_000): Promise<DeviceInvalidated[]> {
    return this.drain(
      this.names.eventsStream,
      this.names.deviceInvalidated,
      (data) => [fromBinary(DeviceInvalidatedSchema, data)],
      expected,
      timeoutMs,
    );
  }

  /** Reads a stream subject with a throwaway consumer until `expected` items arrived or `timeoutMs` passed. */
  private async drain<T>(
    stream: string,
    subject: string,
    decode: (data: Uint8Array) => T[],
    expected: number,
    timeoutMs: number,
  ): Promise<T[]> {
    const jsm = await jetstreamManager(this.nc);
    const durable = `t${randomBytes(4).toString("hex")}`;
    await jsm.consumers.add(stream, { durable_name: durable, filter_subject: subject, ack_policy: AckPolicy.Explicit });
    const consumer = await jetstream(this.nc).consumers.get(stream, durable);
    const all: T[] = [];
    const deadline = Date.now() + timeoutMs;
    while (all.length < expected && Date.now() < deadline) {
      try {
        for await (const m of await consumer.fetch({ max_messages: 100, expires: 1000 })) {
          all.push(...decode(m.data));
          m.ack();
        }
      } catch (err) {
        // A busy event loop (sender, simulator and services share this process) can miss a pull's heartbeat.
        if (!String(err).includes("heartbeats missed")) throw err;
      }
    }
    await jsm.consumers.delete(stream, durable);
    return all;
  }
}

const PLATFORMS = { ios: Platform.IOS, android: Platform.ANDROID, web: Platform.WEB };
