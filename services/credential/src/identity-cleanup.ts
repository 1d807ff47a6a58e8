import type { Logger, Pool } from "@herald/runtime";

const BATCH = 1000;
/** Batches per table and run: a large backlog drains over several runs, never in one long lock. */
const MAX_BATCHES = 10;

/**
 * Deletes expired OAuth models and invitations, and retired signing keys past their
 * retention, in bounded batches on an interval. Readers already ignore such rows, so a
 * late or skipped run changes nothing but table size. Any replica may run it; the
 * batched deletes of two replicas at once only overlap.
 */
export class IdentityCleanup {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly opts: { intervalMs: number; signingKeyRetentionHours: number },
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass; a pass already under way is joined instead of started twice. */
  runOnce(): Promise<void> {
    this.running ??= this.pass()
      .catch((err: unknown) => this.log.warn({ err }, "identity cleanup failed; retrying on the next run"))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<void> {
    const models = await this.drain(
      `DELETE FROM oauth_models WHERE (kind, id) IN (
         SELECT kind, id FROM oauth_models WHERE expires_at <= now() LIMIT ${BATCH})`,
    );
    const invitations = await this.drain(
      `DELETE FROM invitations WHERE id IN (SELECT id FROM invitations WHERE expires_at <= now() LIMIT ${BATCH})`,
    );
    const keys = await this.drain("DELETE FROM signing_keys WHERE retired_at <= now() - make_interval(hours => $1)", [
      this.opts.signingKeyRetentionHours,
    ]);
    if (models + invitations + keys > 0) this.log.debug({ models, invitations, keys }, "identity cleanup");
  }

  private async drain(sql: string, params: unknown[] = []): Promise<number> {
    let total = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const { rowCount } = await this.pool.query(sql, params);
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < BATCH) break;
    }
    return total;
  }
}
