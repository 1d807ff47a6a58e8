import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import type { SimAdminClient } from "@herald/provider-sim/admin-client";
import { streamNames } from "@herald/runtime";
import type { SimPlatform } from "./fleet.js";

export interface CampaignRow {
  status: string;
  audience_size: number;
  published_count: number;
  fanout_done: boolean;
  sent: number;
  delivered: number;
  failed: number;
  bounced: number;
  throttled: number;
}

/**
 * What the chaos suite watches while a fault is on, from outside the services it breaks:
 * the campaign's row in the private PostgreSQL (the gateway may be the thing that is
 * down), the simulator's count of accepted pushes per platform, and the delivery stream
 * in the private NATS. Every probe answers undefined while its server is away.
 */
export class ChaosObserver {
  private readonly pool: pg.Pool;
  private nc: NatsConnection | undefined;
  private jsm: JetStreamManager | undefined;

  constructor(
    databaseUrl: string,
    private readonly campaignSchema: string,
    private readonly sim: SimAdminClient,
    private readonly natsUrl: string,
    private readonly natsNamespace: string,
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2, connectionTimeoutMillis: 2_000 });
    // A PostgreSQL restart ends the idle connections; the next query opens a new one.
    this.pool.on("error", () => undefined);
  }

  async campaign(id: string): Promise<CampaignRow | undefined> {
    try {
      const { rows } = await this.pool.query(
        `SELECT status, audience_size::int, published_count::int, fanout_done, sent::int, delivered::int,
                failed::int, bounced::int, throttled::int
         FROM "${this.campaignSchema}".campaigns WHERE id = $1`,
        [id],
      );
      return rows[0] as CampaignRow | undefined;
    } catch {
      return undefined;
    }
  }

  /** Receipts of the campaign: exactly one per targeted device. */
  async outcomeRows(id: string): Promise<{ rows: number; devices: number }> {
    const { rows } = await this.pool.query<{ rows: number; devices: number }>(
      `SELECT count(*)::int AS rows, count(DISTINCT u.device_id)::int AS devices
       FROM "${this.campaignSchema}".receipt_batches r, unnest(r.device_ids) AS u (device_id)
       WHERE r.campaign_id = $1`,
      [id],
    );
    return rows[0]!;
  }

  /** Outcomes other than delivered, by kind and reason: what a failing fault left behind. */
  async undelivered(id: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ kind: string; reason: string; n: number; attempts: number }>(
      `SELECT (ARRAY['delivered', 'failed', 'bounced', 'throttled'])[u.outcome] AS kind, u.reason,
              count(*)::int AS n, max(u.attempts)::int AS attempts
       FROM "${this.campaignSchema}".receipt_batches r,
            unnest(r.outcomes, r.reasons, r.attempts) AS u (outcome, reason, attempts)
       WHERE r.campaign_id = $1 AND u.outcome <> 1
       GROUP BY 1, 2 ORDER BY n DESC`,
      [id],
    );
    return rows.map((r) => `${r.n} ${r.kind} (${r.reason || "no reason"}, up to ${r.attempts} attempts)`);
  }

  /** Pushes the simulator accepted (2xx) since its stats were reset, over the platforms given. */
  async accepted(platforms: readonly SimPlatform[]): Promise<number | undefined> {
    try {
      const stats = await this.sim.stats();
      return platforms.reduce((n, p) => n + (stats.platforms[p]?.accepted ?? 0), 0);
    } catch {
      return undefined;
    }
  }

  /** Batches in the delivery stream: published and not yet acked by a sender (work-queue retention). */
  async deliveryBacklog(): Promise<number | undefined> {
    try {
      if (!this.nc || this.nc.isClosed()) {
        this.nc = await connect({ servers: this.natsUrl.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
        this.jsm = await jetstreamManager(this.nc);
      }
      const info = await this.jsm!.streams.info(streamNames(this.natsNamespace).deliveryStream);
      return info.state.messages;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    await this.nc?.close().catch(() => undefined);
    await this.pool.end();
  }
}
