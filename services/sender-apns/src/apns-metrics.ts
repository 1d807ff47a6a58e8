import { Counter, Gauge, type Registry } from "prom-client";
import type { Http2Pool } from "@herald/sender";

/** Connection, stream and token metrics of the APNs sender, read from the pool at scrape time. */
export function apnsMetrics(pool: Pick<Http2Pool, "stats">) {
  let signatures: Counter | undefined;
  return {
    tokenSigned(): void {
      signatures?.inc();
    },
    register(registry: Registry): void {
      new Gauge({
        name: "herald_apns_connections",
        help: "HTTP/2 connections to APNs, opening and draining ones included",
        registers: [registry],
        collect() {
          this.set(pool.stats().connections);
        },
      });
      new Gauge({
        name: "herald_apns_streams_in_use",
        help: "HTTP/2 streams carrying a request to APNs",
        registers: [registry],
        collect() {
          this.set(pool.stats().streams);
        },
      });
      new Gauge({
        name: "herald_apns_queued_sends",
        help: "Sends waiting for a free APNs stream",
        registers: [registry],
        collect() {
          this.set(pool.stats().queued);
        },
      });
      signatures = new Counter({
        name: "herald_apns_token_refreshes_total",
        help: "Provider JWTs signed (a key's first token included)",
        registers: [registry],
      });
    },
  };
}
