import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { Gauge, type Registry } from "prom-client";
import { within } from "./readiness.js";

export interface WatchedConsumer {
  /** Label values of this consumer's series (bounded: platforms, consumer names). */
  labels: Record<string, string>;
  stream: string;
  durable: string;
}

/**
 * A gauge of JetStream consumer backlogs — messages not yet delivered plus delivered but
 * not yet acked (num_pending + num_ack_pending), the figure KEDA's nats-jetstream scaler
 * uses — read from the server at scrape time. A consumer that does not exist yet (its
 * service never started) counts its stream's waiting messages as 0; one that cannot be
 * read within a second is left out of that scrape rather than reported wrong.
 */
export function registerConsumerBacklog(
  registry: Registry,
  nc: NatsConnection,
  opts: { name: string; help: string; labelNames: string[]; consumers: WatchedConsumer[] },
): void {
  new Gauge({
    name: opts.name,
    help: opts.help,
    labelNames: opts.labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      if (nc.isClosed()) return;
      const jsm = await within(1_000, jetstreamManager(nc)).catch(() => undefined);
      if (!jsm) return;
      await Promise.all(
        opts.consumers.map(async (c) => {
          try {
            const info = await within(1_000, jsm.consumers.info(c.stream, c.durable));
            this.set(c.labels, info.num_pending + info.num_ack_pending);
          } catch (err) {
            if ((err as { code?: unknown }).code === 404 || /consumer not found/i.test(String(err)))
              this.set(c.labels, 0);
          }
        }),
      );
    },
  });
}
