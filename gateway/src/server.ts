import type { AddressInfo } from "node:net";
import type { Logger } from "@herald/runtime";
import { Redis } from "ioredis";
import { build } from "./app.js";
import { connectBackends } from "./backends.js";
import type { Config } from "./config.js";

export interface Gateway {
  port: number;
  close(): Promise<void>;
}

/** Connects to Redis and the backend services, builds the app and listens. */
export async function start(config: Config, deps: { log: Logger }): Promise<Gateway> {
  const { log } = deps;
  const backends = connectBackends(config);
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
    backends.close();
    redis.disconnect();
  };
  try {
    const app = await build({
      config,
      ...backends.clients,
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
