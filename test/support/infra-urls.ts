import { randomBytes } from "node:crypto";
import net from "node:net";

export interface InfraUrls {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
}

export const DEFAULT_URLS: InfraUrls = {
  databaseUrl: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/herald_test",
  natsUrl: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
};

/**
 * What every Herald process of one stack reads (the end-to-end tests' and the bench's): the
 * infrastructure, the stack's NATS namespace and Redis prefix (`id`), a master key of its
 * own, and the bootstrap API key.
 */
export function stackEnv(infra: InfraUrls, id: string, apiKey: string): Record<string, string> {
  return {
    DATABASE_URL: infra.databaseUrl,
    NATS_URL: infra.natsUrl,
    NATS_NAMESPACE: id,
    REDIS_URL: infra.redisUrl,
    REDIS_KEY_PREFIX: `${id}:`,
    HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
    HERALD_BOOTSTRAP_API_KEY: apiKey,
  };
}

export function reachable(rawUrl: string, timeoutMs = 2_000): Promise<boolean> {
  const u = new URL(rawUrl);
  const defaults: Record<string, number> = { "postgres:": 5432, "nats:": 4222, "redis:": 6379 };
  const port = Number(u.port || defaults[u.protocol] || 0);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port, timeout: timeoutMs });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(false));
  });
}
