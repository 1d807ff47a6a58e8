import {
  connect,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type ConnectionOptions,
  type NatsConnection,
} from "@nats-io/transport-node";
import {
  JetStreamApiError,
  jetstreamManager,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import type { Logger } from "pino";
import { equalJitter, sleep, type Backoff } from "./backoff.js";
import type { HeraldStreamConfig } from "./streams.js";

export type { NatsConnection };

/**
 * The wait before dialling a server again that was tried last: doubled per try from 250 ms
 * up to 2 s, with equal jitter so that every process of an install does not dial at once.
 * Another server of the list is dialled without waiting: a client whose server died is on
 * a survivor after one dial.
 */
export const NATS_RECONNECT_BACKOFF: Backoff = { baseMs: 250, capMs: 2_000 };

/**
 * The client's options for NATS_URL, one server or every server of a cluster,
 * comma-separated. It reconnects forever; the servers a cluster announces are added to the
 * list. waitOnFirstConnect: without it nats.js drops a listed server that does not answer
 * the first connect from its list for good, so a process started while one server of the
 * cluster is down (a rolling upgrade) would never use that server again; with it, start-up
 * waits until some server answers (the process is not ready meanwhile). `connected()`
 * starts the backoff again from its first step; connectNats() calls it on every reconnection.
 */
export function natsConnection(url: string, name: string): { options: ConnectionOptions; connected(): void } {
  let tries = 0;
  return {
    options: {
      servers: url
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      name,
      maxReconnectAttempts: -1,
      waitOnFirstConnect: true,
      // nats.js asks before each dial, and while it waits for a server to be due again.
      reconnectDelayHandler: () => equalJitter(NATS_RECONNECT_BACKOFF, tries++),
    },
    connected: () => {
      tries = 0;
    },
  };
}

export async function connectNats(url: string, name: string, log: Logger): Promise<NatsConnection> {
  const { options, connected } = natsConnection(url, name);
  const nc = await connect(options);
  connected();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "reconnect") connected();
      if (s.type === "disconnect" || s.type === "reconnect" || s.type === "error") {
        log.warn({ nats: s.type, server: "server" in s ? s.server : undefined }, "nats connection status");
      }
    }
  })();
  return nc;
}

/**
 * Creates the stream, or updates it to the given config when it exists. Its replicas
 * (and placement) are changed only upwards and in a step of their own: an install
 * upgraded to more replicas has its streams scaled up when a service starts (logged at
 * info), and when the cluster cannot hold them (fewer servers than replicas, no server
 * with the tags) the stream keeps running as it is, with a warning, rather than the
 * service not starting. A stream with more replicas than configured keeps them (scaled
 * down only by hand: `nats stream edit --replicas`).
 */
export async function ensureStream(
  nc: NatsConnection,
  config: HeraldStreamConfig,
  log: Logger,
): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const retry = <T>(what: string, call: () => Promise<T>) => retryJetStreamApi(call, { what, log });
  const current = await retry("stream info", () =>
    jsm.streams.info(config.name).catch((err: unknown): StreamInfo | undefined => {
      if (/stream not found/i.test((err as Error).message)) return undefined;
      throw err;
    }),
  );
  if (!current) {
    // Repeated after a timeout: the server accepts the same config again.
    await retry("stream create", () => jsm.streams.add(config));
    return jsm;
  }
  const plan = replicaPlan(current.config, config);
  await retry("stream update", () => jsm.streams.update(config.name, { ...config, ...plan.keep }));
  const fields = { stream: config.name, from: plan.from, to: plan.to };
  if (plan.change) {
    try {
      await retry("stream scale", () => jsm.streams.update(config.name, { ...config, ...plan.change }));
      log.info(fields, "stream replication changed");
    } catch (err) {
      log.warn(
        { ...fields, reason: (err as Error).message },
        "stream replication not changed: the stream keeps running as it is",
      );
    }
  } else if (plan.from.replicas > plan.to.replicas) {
    log.info(fields, "stream keeps more replicas than configured");
  }
  return jsm;
}

/**
 * How long start-up keeps repeating a JetStream API call that timed out or found JetStream
 * unavailable. On a cluster, creating a stream or a consumer waits for its replicas to
 * elect a leader; with every process of an install starting at once on two loaded cores,
 * that took longer than nats.js's 5 s request timeout (the NATS cluster test,
 * test/e2e/nats-cluster.e2e.test.ts). A NATS leader election ends well within it.
 */
export const JETSTREAM_API_PATIENCE_MS = 60_000;
const JETSTREAM_API_BACKOFF: Backoff = { baseMs: 250, capMs: 4_000 };

/** A timeout, no responders or JetStream's 503: worth trying again. */
export function transientJetStreamError(err: unknown): boolean {
  return (
    err instanceof TimeoutError ||
    err instanceof NoRespondersError ||
    (err instanceof RequestError && err.isNoResponders()) ||
    (err instanceof JetStreamApiError && err.status === 503)
  );
}

/**
 * `call`, repeated with backoff while it fails with a transient error
 * (transientJetStreamError), for at most JETSTREAM_API_PATIENCE_MS; each retry logged at
 * warn when a logger is given. Only for idempotent calls (info, create or update to one config).
 */
export async function retryJetStreamApi<T>(
  call: () => Promise<T>,
  opts: { what: string; log?: Logger; patienceMs?: number },
): Promise<T> {
  const deadline = Date.now() + (opts.patienceMs ?? JETSTREAM_API_PATIENCE_MS);
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!transientJetStreamError(err) || Date.now() >= deadline) throw err;
      opts.log?.warn(
        { what: opts.what, attempt: attempt + 1, reason: (err as Error).message },
        "JetStream API call failed; retrying",
      );
      await sleep(equalJitter(JETSTREAM_API_BACKOFF, attempt));
    }
  }
}

type Topology = Pick<StreamConfig, "num_replicas" | "placement">;

export interface ReplicaPlan {
  from: { replicas: number; tags: string[] };
  to: { replicas: number; tags: string[] };
  /** The existing stream's replicas and placement, for the update of everything else. */
  keep: Partial<Topology>;
  /** The update of replicas and placement, when one is due. */
  change?: Partial<Topology>;
}

/**
 * What ensureStream does with an existing stream's replicas and placement: more replicas
 * or other placement tags than it has are a change; fewer replicas are not (kept).
 */
export function replicaPlan(current: Partial<StreamConfig>, wanted: Partial<StreamConfig>): ReplicaPlan {
  const from = { replicas: current.num_replicas || 1, tags: current.placement?.tags ?? [] };
  const to = { replicas: wanted.num_replicas || 1, tags: wanted.placement?.tags ?? [] };
  const keep: Partial<Topology> = {
    num_replicas: from.replicas,
    placement: current.placement,
  };
  const replicas = Math.max(from.replicas, to.replicas);
  const retag = [...from.tags].sort().join(",") !== [...to.tags].sort().join(",");
  if (replicas === from.replicas && !retag) return { from, to, keep };
  return { from, to, keep, change: { num_replicas: replicas, placement: wanted.placement } };
}
export { headers as natsHeaders } from "@nats-io/transport-node";

/**
 * How long a pull (a JetStream fetch) waits on the server for messages. nats.js has the
 * server send idle heartbeats every half of it and ends a fetch itself after two missed
 * ones, with a warning and a pause of the consumer's loop; the server holds the request
 * until the client's unsubscribe reaches it, and a message it sends in that moment goes
 * to an inbox nobody reads and comes back only after the consumer's ack wait. With 2 s a
 * sender under load missed two (the bench's tracing part); with 5 s the client checks
 * every 2.5 s and gives up after two checks in a row find nothing heard for longer than
 * that, so only 5 to 7.5 s without a word from the server ends a fetch (an 8 s freeze of
 * NATS did it to the campaign service's; the chaos suite's 6 s freeze did not, in two
 * runs). For the same reason a consumer that stops lets its fetch run out rather than
 * abandon it.
 */
export const PULL_EXPIRES_MS = 5_000;
