import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { JetStreamClient } from "@nats-io/jetstream";
import { AppDeletedSchema } from "@herald/proto/delivery";
import { inTransaction, type Logger, type Pool, type StreamNames } from "@herald/runtime";

/**
 * An event stored in the outbox, in the transaction of the change it announces. The row
 * keeps the payload as JSON (readable in the database, and rows written by an earlier
 * release stay valid); it is published as protobuf (encode()).
 */
export interface OutboxEvent {
  kind: "app.deleted";
  /** JetStream de-duplication id: a re-publish after a crash is dropped by the stream. */
  msgId: string;
  payload: Record<string, unknown>;
}

export function appDeletedEvent(appId: string, deletedAt: Date): OutboxEvent {
  return {
    kind: "app.deleted",
    msgId: `app.deleted.${appId}`,
    payload: { app_id: appId, deleted_at: deletedAt.toISOString() },
  };
}

const BATCH = 100;

/**
 * Moves outbox rows to JetStream. A row is deleted only after the stream acked its
 * message, so a crash between the database commit and the publish loses nothing: the
 * next run (right after a change, at start-up and on a timer) sends it. Rows are claimed
 * with SKIP LOCKED, so replicas do not publish the same row at the same time.
 */
export class OutboxPublisher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly js: JetStreamClient,
    private readonly names: StreamNames,
    private readonly log: Logger,
    private readonly intervalMs = 5_000,
  ) {}

  start(): void {
    void this.flush();
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Publishes what is pending; resolves when this and any run it had to wait for end. */
  flush(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.rerun = false;
        await this.publishAll();
      } while (this.rerun && !this.stopped);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async publishAll(): Promise<void> {
    try {
      while (!this.stopped && (await this.publishBatch()) === BATCH);
    } catch (err) {
      this.log.warn({ err }, "outbox publish failed; will retry");
    }
  }

  /** Returns how many rows were published; throws after keeping the progress it made. */
  private async publishBatch(): Promise<number> {
    let failure: unknown;
    const published = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: string; kind: OutboxEvent["kind"]; msg_id: string; payload: unknown }>(
        "SELECT id, kind, msg_id, payload FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
        [BATCH],
      );
      const done: string[] = [];
      try {
        for (const row of rows) {
          await this.js.publish(this.subject(row.kind), encodeEvent(row.kind, row.payload), { msgID: row.msg_id });
          done.push(row.id);
        }
      } catch (err) {
        failure = err;
      }
      if (done.length > 0) await client.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [done]);
      return done.length;
    });
    if (published > 0) this.log.debug({ published }, "outbox events published");
    if (failure) throw failure;
    return published;
  }

  private subject(kind: OutboxEvent["kind"]): string {
    switch (kind) {
      case "app.deleted":
        return this.names.appDeleted;
    }
  }
}

/** The protobuf message of an outbox row's JSON payload. */
function encodeEvent(kind: OutboxEvent["kind"], payload: unknown): Uint8Array {
  switch (kind) {
    case "app.deleted": {
      const { app_id, deleted_at } = payload as { app_id: string; deleted_at: string };
      return toBinary(
        AppDeletedSchema,
        create(AppDeletedSchema, { appId: app_id, deletedAt: timestampFromDate(new Date(deleted_at)) }),
      );
    }
  }
}
