import { randomBytes, randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import type { DeviceInvalidated, NotificationOptionsSchema } from "@herald/proto/delivery";
import { Redis } from "ioredis";
import { inject } from "vitest";
import { makeServiceAccount } from "../../../test/support/credential-fixtures.js";
import { log, type Outcomes, SenderTestBed, type Target } from "../../../test/support/sender-bed.js";
import { uniqueName } from "../../../test/support/unique.js";
import { type Config, loadConfig } from "../src/config.js";

export { log, type Outcomes, type Target };

export interface TestApp {
  appId: string;
  projectId: string;
  clientEmail: string;
}

/**
 * What the FCM sender runs against in its integration tests: the sender test bed (real
 * credential service and JetStream, the strict simulator as FCM and as the service
 * accounts' OAuth token endpoint) and Redis, under a prefix of this test file's own.
 */
export class FcmTestBed extends SenderTestBed {
  redis!: Redis;
  readonly redisPrefix = `${uniqueName("fcmrl")}:`;

  constructor() {
    super("android");
  }

  override async setUp(): Promise<void> {
    await super.setUp();
    this.redis = new Redis(inject("infra").redisUrl);
  }

  override async tearDown(): Promise<void> {
    if (this.redis) {
      const keys = await this.redis.keys(`${this.redisPrefix}*`);
      if (keys.length > 0) await this.redis.del(...keys);
      this.redis.disconnect();
    }
    await super.tearDown();
  }

  senderConfig(overrides: Record<string, string> = {}): Config {
    return loadConfig(
      this.senderEnv({
        FCM_URL: this.sim.publicUrl,
        REDIS_URL: inject("infra").redisUrl,
        REDIS_KEY_PREFIX: this.redisPrefix,
        ...overrides,
      }),
    );
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
    const appId = await this.createApp(Platform.ANDROID, projectId, `com.example.${projectId.replace(/-/g, "")}`);
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
  publishBatch(
    app: TestApp,
    targets: Target[],
    extra: {
      dataJson?: string;
      seq?: bigint;
      campaignId?: string;
      notification?: MessageInitShape<typeof NotificationOptionsSchema>;
    } = {},
  ): Promise<string> {
    const { seq, ...fields } = extra;
    return this.publish(targets, {
      appId: app.appId,
      highPriority: true,
      collapseId: "news",
      imageUrl: "https://example.com/i.png",
      sequence: seq,
      ...fields,
    });
  }

  /** The device.invalidated events published so far for the app. */
  async invalidationsOf(appId: string): Promise<DeviceInvalidated[]> {
    return (await this.invalidations()).filter((ev) => ev.appId === appId);
  }
}
