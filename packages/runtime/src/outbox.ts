import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import type { Context } from "@opentelemetry/api";
import { Gauge, type Registry } from "prom-client";
import type { Logger } from "pino";
import { inTransaction, type Pool, type PoolClient } from "./db.js";
import { natsHeaders } from "./nats.js";
import { context, currentTraceContext, ROOT_CONTEXT, trace, traceContextFrom, tracedPublish } from "./tracing.js";

/**
 * The transactional outbox: an event is written in the transaction of the change it
 * announces, and a relay moves it to JetStream afterwards. Every service that announces
 * changes has the same table (see OUTBOX_TABLE) in its own schema:
 *
 *   outbox (id bigserial PRIMARY KEY, kind text, msg_id text, payload jsonb, created_at timestamptz,
 *           trace_context text)
 *
 * A row keeps its payload as JSON (readable in the database; rows written by an earlier
 * release stay valid) and is encoded for the stream by its kind's `encode`. It keeps the
 * W3C trace context of the change too (traceparent[;tracestate], as currentTraceContext()
 * writes it; NULL when the change was not traced): the relay publishes the event in that
 * trace, whenever and wherever it runs, and the message's headers carry it on.
 */
export interface OutboxEvent {
  kind: string;
  /** JetStream de-duplication id: a re-publish after a crash is dropped by the stream. */
  msgId: string;
  payload: Record<string, unknown>;
  /**
   * The trace the event belongs to, when it is not the active one (work done outside the
   * span of what it announces, e.g. a fan-out's claim announcing the campaign of a traced
   * request). By default, the trace active when the row is written.
   */
  traceContext?: string;
}

/** Where a kind of event goes and how it is encoded. */
export interface OutboxKind {
  subject: string;
  encode(payload: unknown): Uint8Array;
}

/** Inserts events, with the active trace context, in one statement, inside the caller's transaction. */
export async function writeOutbox(client: PoolClient | Pool, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const active = currentTraceContext() ?? null;
  await client.query(
    `INSERT INTO outbox (kind, msg_id, payload, trace_context)
     SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[])`,
    [
      events.map((e) => e.kind),
      events.map((e) => e.msgId),
      events.map((e) => JSON.stringify(e.payload)),
      events.map((e) => e.traceContext ?? active),
    ],
  );
}

/**
 * Publishes one message in the trace `parent` holds: a producer span `publish <kind>`,
 * its child, whose context the message's headers (traceparent, tracestate) carry to the
 * consumer. Without a trace in `parent` the message goes as it is: no span, no headers.
 * The outbox relay (the trace kept with a row) and publishWebhookEvent (the active one)
 * publish through it.
 */
export function publishInTrace(
  js: JetStreamClient,
  /** Bounded, for the span's name ("webhook", "app.deleted"), never an id. */
  kind: string,
  subject: string,
  data: Uint8Array,
  msgID: string,
  parent: Context,
): Promise<PubAck> {
  const traced = trace.getSpanContext(parent);
  if (!traced || !trace.isSpanContextValid(traced)) return js.publish(subject, data, { msgID });
  const headers = natsHeaders();
  return context.with(parent, () =>
    tracedPublish(kind, subject, { "messaging.message.id": msgID }, headers, () =>
      js.publish(subject, data, { msgID, headers }),
    ),
  );
}

const BATCH = 100;

/**
 * Moves outbox rows to JetStream. A row is deleted only after the stream acked its
 * message, so a crash between the database commit and the publish loses nothing: the
 * next run (right after a change via flush(), at start-up and on a timer) sends it. Rows
 * are claimed with SKIP LOCKED, so replicas do not publish the same row at the same time.
 * A row of a kind this release does not know stays (and shows in the pending gauge).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = false;

  constructor(
    private readonly opts: {
      pool: Pool;
      js: JetStreamClient;
      kinds: Record<string, OutboxKind>;
      log: Logger;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    void this.flush();
    this.timer = setInterval(() => void this.flush(), this.opts.intervalMs ?? 5_000);
    this.timer.unref();
  }

  /** Publishes what is pending; resolves when this and any run it had to wait for end. Never rejects. */
  flush(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    // A run publishes rows of many traces (each in its own, see publishInTrace): its
    // queries belong to none of them, not to the caller's that happened to flush.
    this.running = context
      .with(ROOT_CONTEXT, async () => {
        do {
          this.rerun = false;
          await this.publishAll();
        } while (this.rerun && !this.stopped);
      })
      .finally(() => {
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
      this.opts.log.warn({ err }, "outbox publish failed; will retry");
    }
  }

  /** Returns how many rows were published; throws after keeping the progress it made. */
  private async publishBatch(): Promise<number> {
    const { pool, js, kinds, log } = this.opts;
    let failure: unknown;
    const published = await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{
        id: string;
        kind: string;
        msg_id: string;
        payload: unknown;
        trace_context: string | null;
      }>(
        `SELECT id, kind, msg_id, payload, trace_context FROM outbox WHERE kind = ANY($2::text[])
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH, Object.keys(kinds)],
      );
      const done: string[] = [];
      try {
        // In order, each awaited: JetStream keeps the outbox's order for every subject.
        for (const row of rows) {
          const kind = kinds[row.kind]!;
          await publishInTrace(
            js,
            row.kind,
            kind.subject,
            kind.encode(row.payload),
            row.msg_id,
            traceContextFrom(row.trace_context),
          );
          done.push(row.id);
        }
      } catch (err) {
        failure = err;
      }
      if (done.length > 0) await client.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [done]);
      return done.length;
    });
    if (published > 0) log.debug({ published }, "outbox events published");
    if (failure) throw failure;
    return published;
  }
}

/**
 * The outbox's gauges: events written but not yet in JetStream, and the age of the
 * oldest (a growing age means the relay is stuck). One query per scrape for both.
 */
export function registerOutboxMetrics(registry: Registry, pool: Pool): void {
  let last: Promise<{ n: number; age: number }> | undefined;
  const read = () => {
    last ??= pool
      .query<{ n: string; age: string | null }>(
        "SELECT count(*) AS n, EXTRACT(EPOCH FROM now() - min(created_at)) AS age FROM outbox",
      )
      .then((r) => ({ n: Number(r.rows[0]!.n), age: Number(r.rows[0]!.age ?? 0) }))
      .finally(() => setTimeout(() => (last = undefined), 1_000).unref());
    return last;
  };
  new Gauge({
    name: "herald_outbox_pending_events",
    help: "Events written to the outbox and not yet published to JetStream",
    registers: [registry],
    async collect() {
      this.set((await read()).n);
    },
  });
  new Gauge({
    name: "herald_outbox_oldest_pending_seconds",
    help: "Age of the oldest unpublished outbox event (0 when the outbox is empty)",
    registers: [registry],
    async collect() {
      this.set((await read()).age);
    },
  });
}
