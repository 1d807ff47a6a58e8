import { randomBytes, randomUUID } from "node:crypto";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { inject } from "vitest";
import { Platform } from "@herald/proto/common";
import {
  DeliveryBatchSchema,
  type NotificationOptionsSchema,
  DeviceInvalidatedSchema,
  OutcomeBatchSchema,
  type DeviceInvalidated,
  type OutcomeBatch,
} from "@herald/proto/delivery";
import { createLogger, readEnv, streamNames, type StreamNames } from "@herald/runtime";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { configSpec as simConfigSpec } from "@herald/provider-sim/config";
import { start as startSim, type ProviderSim } from "@herald/provider-sim/server";
import {
  cleanUp as cleanUpCredential,
  rawPool,
  startService as startCredential,
  testConfig as credentialConfig,
  type Running,
} from "../../credential/test/harness.js";
import { makeServiceAccount } from "../../../test/support/credential-fixtures.js";
import { deleteNamespaceStreams } from "../../../test/support/nats-streams.js";
import { uniqueName } from "../../../test/support/unique.js";
import { loadConfig, type Config } from "../src/config.js";

export const log = createLogger("test", "silent");

export interface TestApp {
  appId: string;
  projectId: string;
  clientEmail: string;
}

export interface Target {
  id: string;
  token: string;
}

export type Outcomes = OutcomeBatch["outcomes"];

/**
 * What the FCM sender runs against in its integration tests: the real credential
 * service, JetStream and Redis, and the strict simulator as FCM and as the service
 * accounts' OAuth token endpoint. Each test file gets its own schema, NATS namespace
 * and Redis prefix.
 */
export class FcmTestBed {
  sim!: ProviderSim;
  admin!: SimAdminClient;
  redis!: Redis;
  readonly redisPrefix = `${uniqueName("fcmrl")}:`;
  private credential!: Running;
  private credCfg!: ReturnType<typeof credentialConfig>;
  private orgId!: string;
  private nc!: NatsConnection;
  private names!: StreamNames;
  private readonly namespace = uniqueName("fcmns");

  async setUp(): Promise<void> {
    const infra = inject("infra");
    this.sim = await startSim(
      readEnv(simConfigSpec, { PORT: "0", ADMIN_PORT: "0", LOG_LEVEL: "silent", SIM_SEED: "7" }),
      { log },
    );
    this.admin = new SimAdminClient(`http://127.0.0.1:${this.sim.adminPort}`);
    this.credCfg = credentialConfig({ logLevel: "silent" });
    this.credential = await startCredential(this.credCfg);
    const pool = rawPool(this.credCfg);
    const { rows } = await pool.query<{ id: string }>("SELECT id FROM orgs LIMIT 1");
    await pool.end();
    this.orgId = rows[0]!.id;
    this.nc = await connect({ servers: infra.natsUrl });
    this.redis = new Redis(infra.redisUrl);
    this.names = streamNames(this.namespace);
  }

  async tearDown(): Promise<void> {
    await this.nc?.close();
    await this.credential?.close();
    await this.sim?.close();
    if (this.redis) {
      const keys = await this.redis.keys(`${this.redisPrefix}*`);
      if (keys.length > 0) await this.redis.del(...keys);
      this.redis.disconnect();
    }
    if (this.credCfg) await cleanUpCredential(this.credCfg);
    await deleteNamespaceStreams(inject("infra").natsUrl, this.namespace);
  }

  senderConfig(overrides: Record<string, string> = {}): Config {
    const infra = inject("infra");
    return loadConfig({
      NATS_URL: infra.natsUrl,
      NATS_NAMESPACE: this.namespace,
      ADMIN_PORT: "0",
      CREDENTIAL_URL: `http://127.0.0.1:${this.credential.app.port}`,
      FCM_URL: this.sim.publicUrl,
      REDIS_URL: infra.redisUrl,
      REDIS_KEY_PREFIX: this.redisPrefix,
      SENDER_RETRY_BASE_MS: "20",
      SENDER_RETRY_MAX_DELAY_MS: "100",
      SENDER_RETRY_MAX_ATTEMPTS: "4",
      LOG_LEVEL: "silent",
      ...overrides,
    });
  }

  /** An Android app whose stored service account (token_uri: the simulator) the simulator knows, as Google would. */
  async newApp(): Promise<TestApp> {
    const projectId = `herald-${randomBytes(4).toString("hex")}`;
    const sa = makeServiceAccount({ tokenUri: `${this.sim.publicUrl}/token`, projectId });
    const { private_key_id } = JSON.parse(sa.json) as { private_key_id: string };
    await this.admin.registerFcmServiceAccount({
      project_id: projectId,
      client_email: sa.clientEmail,
      private_key: sa.privateKeyPem,
      private_key_id,
    });
    const app = await this.credential.client.createApp({
      orgId: this.orgId,
      name: projectId,
      platform: Platform.ANDROID,
      bundleId: `com.example.${projectId.replace(/-/g, "")}`,
    });
    const appId = app.app!.id;
    await this.credential.client.putPlatformConfig({
      appId,
      credentials: { case: "fcm", value: { serviceAccountJson: sa.json } },
    });
    return { appId, projectId, clientEmail: sa.clientEmail };
  }

  /** `count` registration tokens of the app's project, each with a device id. */
  async targets(app: TestApp, count: number): Promise<Target[]> {
    return (await this.admin.createFcmDevices(app.projectId, count)).map((token) => ({ id: randomUUID(), token }));
  }

  async tokensIssued(clientEmail: string): Promise<number> {
    const { service_accounts } = await this.admin.fcmServiceAccounts();
    return service_accounts.find((a) => a.client_email === clientEmail)?.tokens_issued ?? 0;
  }

  /** Publishes one delivery batch (German and English payloads alternating); returns the campaign id. */
  async publishBatch(
    app: TestApp,
    targets: Target[],
    extra: {
      dataJson?: string;
      seq?: bigint;
      campaignId?: string;
      notification?: MessageInitShape<typeof NotificationOptionsSchema>;
    } = {},
  ): Promise<string> {
    const campaignId = extra.campaignId ?? randomUUID();
    const batch = create(DeliveryBatchSchema, {
      campaignId,
      appId: app.appId,
      platform: Platform.ANDROID,
      sequence: extra.seq ?? 1n,
      payloads: [
        { index: 0, title: "Hallo", body: "Wie geht's?" },
        { index: 1, title: "Hello", body: "How are you?" },
      ],
      targets: targets.map((t, i) => ({ deviceId: t.id, pushToken: t.token, payloadIndex: i % 2 })),
      dataJson: extra.dataJson ?? JSON.stringify({ action_url: "https://example.com/a" }),
      ttlSeconds: 3600,
      highPriority: true,
      collapseId: "news",
      imageUrl: "https://example.com/i.png",
      notification: extra.notification,
      createdAt: timestampFromDate(new Date()),
    });
    await jetstream(this.nc).publish(this.names.delivery("android"), toBinary(DeliveryBatchSchema, batch), {
      msgID: `${campaignId}.${batch.sequence}`,
    });
    return campaignId;
  }

  /** Reads every OutcomeBatch of a campaign until `expected` outcomes arrived. */
  async outcomes(campaignId: string, expected: number, timeoutMs = 30_000): Promise<Outcomes> {
    const all: Outcomes = [];
    await this.drain(
      this.names.outcomesStream,
      this.names.outcome(campaignId),
      () => all.length >= expected,
      timeoutMs,
      (data) => {
        all.push(...fromBinary(OutcomeBatchSchema, data).outcomes);
      },
    );
    return all;
  }

  /** The device.invalidated events published so far for the app. */
  async invalidations(appId: string): Promise<DeviceInvalidated[]> {
    const found: DeviceInvalidated[] = [];
    await this.drain(
      this.names.eventsStream,
      this.names.deviceInvalidated,
      () => false,
      1_000,
      (data) => {
        const ev = fromBinary(DeviceInvalidatedSchema, data);
        if (ev.appId === appId) found.push(ev);
      },
    );
    return found;
  }

  private async drain(
    stream: string,
    subject: string,
    done: () => boolean,
    timeoutMs: number,
    onMessage: (data: Uint8Array) => void,
  ) {
    const jsm = await jetstreamManager(this.nc);
    const durable = `t${randomBytes(4).toString("hex")}`;
    await jsm.consumers.add(stream, { durable_name: durable, filter_subject: subject, ack_policy: AckPolicy.Explicit });
    const consumer = await jetstream(this.nc).consumers.get(stream, durable);
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) {
      const msgs = await consumer.fetch({ max_messages: 100, expires: 1000 });
      for await (const m of msgs) {
        onMessage(m.data);
        m.ack();
      }
    }
    await jsm.consumers.delete(stream, durable);
  }
}
