import type { AddressInfo } from "node:net";
import { AndroidChannelService } from "@herald/proto/android_channel";
import { CampaignService } from "@herald/proto/campaign";
import { CredentialService } from "@herald/proto/credential";
import { DeviceRegistryService } from "@herald/proto/device";
import { IdentityService } from "@herald/proto/identity";
import { createRpcClient, type Logger } from "@herald/runtime";
import { Redis } from "ioredis";
import { build } from "./app.js";
import type { Config } from "./config.js";

export interface Gateway {
  port: number;
  close(): Promise<void>;
}

/** Connects to Redis and the backend services, builds the app and listens. */
export async function start(config: Config, deps: { log: Logger }): Promise<Gateway> {
  const { log } = deps;
  const credential = createRpcClient(CredentialService, config.credentialUrl);
  const identity = createRpcClient(IdentityService, config.credentialUrl);
  const devices = createRpcClient(DeviceRegistryService, config.deviceRegistryUrl);
  const campaigns = createRpcClient(CampaignService, config.campaignUrl);
  const androidChannels = createRpcClient(AndroidChannelService, config.deviceRegistryUrl);
  // Commands fail fast while Redis is away (no offline queue), so the limiter can fail
  // open at once instead of holding requests until a reconnect.
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
  });
  redis.on("error", (err: Error) => log.warn({ err: err.message }, "redis connection error"));
  await redis.connect().catch((err: Error) => {
    log.warn({ err: err.message }, "redis unreachable at start-up; rate limiting is off until it answers");
  });

  const closeClients = async () => {
    credential.close();
    identity.close();
    devices.close();
    campaigns.close();
    androidChannels.close();
    redis.disconnect();
  };
  try {
    const app = await build({
      config,
      credential: credential.client,
      identity: identity.client,
      devices: devices.client,
      campaigns: campaigns.client,
      androidChannels: androidChannels.client,
      redis,
      log,
    });
    await app.listen({ port: config.port, host: config.host });
    return {
      port: (app.server.address() as AddressInfo).port,
      close: async () => {
        await app.close();
        await closeClients();
      },
    };
  } catch (err) {
    await closeClients();
    throw err;
  }
}
