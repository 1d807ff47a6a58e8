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
