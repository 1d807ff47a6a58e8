import type { NatsConnection } from "@nats-io/transport-node";
import type pg from "pg";

/** How long one dependency may take to answer a readiness check. */
export const READY_TIMEOUT_MS = 2_000;

/** Resolves as `work` does, or rejects once `ms` have passed. */
export async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export type ReadyCheck = () => Promise<boolean>;

/** NATS answers a round trip (a connection that is reconnecting does not). */
export const natsReady =
  (nc: NatsConnection): ReadyCheck =>
  () =>
    nc.isClosed()
      ? Promise.resolve(false)
      : within(READY_TIMEOUT_MS, nc.flush()).then(
          () => true,
          () => false,
        );

/** PostgreSQL answers a query. */
export const postgresReady =
  (pool: pg.Pool): ReadyCheck =>
  () =>
    within(READY_TIMEOUT_MS, pool.query("SELECT 1")).then(
      (r) => r.rowCount === 1,
      () => false,
    );

/** Redis answers a PING. */
export const redisReady =
  (redis: { ping(): Promise<unknown> }): ReadyCheck =>
  () =>
    within(READY_TIMEOUT_MS, redis.ping()).then(
      () => true,
      () => false,
    );

/** Ready when every check is (all run at once). */
export const allReady =
  (...checks: ReadyCheck[]): ReadyCheck =>
  async () =>
    (await Promise.all(checks.map((check) => check()))).every(Boolean);
