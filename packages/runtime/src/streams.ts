import { RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";

// Durations are written in milliseconds and converted by nanos(), as in consumer.ts.
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * How every stream Herald creates is replicated (env NATS_STREAM_REPLICAS,
 * NATS_STREAM_PLACEMENT_TAGS). Durable consumers follow their stream's replicas
 * (consumer.ts). An existing stream with fewer replicas is scaled up when a service starts
 * (ensureStream in nats.ts).
 */
export interface StreamReplication {
  /** 1 on a single server; 3 on a cluster, so that losing one server loses nothing. */
  replicas: number;
  /** Servers whose `server_tags` include every one of these hold the replicas; none: any. */
  placementTags: string[];
}

export const SINGLE_REPLICA: StreamReplication = { replicas: 1, placementTags: [] };

/**
 * JetStream names, and how the streams are replicated, in one place. A namespace (env
 * NATS_NAMESPACE, empty by default) prefixes every stream and subject, so that tests, or
 * two Herald installs sharing one NATS, never see each other's messages.
 */
export interface StreamNames {
  /** Applied by every *StreamConfig() below. */
  replication: StreamReplication;
  /** Domain events that more than one service reacts to. */
  eventsStream: string;
  /** herald.v1.AppDeleted (protobuf), published by the credential service. */
  appDeleted: string;
  /**
   * Where releases before the protobuf one published app.deleted as JSON. A subject of its
   * own, so that a device registry of the older release, whose durable filters on it,
   * never receives (and drops) a protobuf message during a rolling upgrade; today's
   * registry drains it with a durable of its own. Remove one release later.
   */
  legacyAppDeleted: string;
  deviceInvalidated: string;
  /** Work queue of rendered delivery batches, one subject per platform. */
  deliveryStream: string;
  delivery(platform: PlatformSubject): string;
  /** Per-device outcomes reported by the senders, one subject per campaign. */
  outcomesStream: string;
  outcome(campaignId: string): string;
  outcomesWildcard: string;
  /** Webhook events (herald.v1.WebhookEvent protobuf) for the webhooks dispatcher. */
  webhooksStream: string;
  webhookEvents: string;
  /** Consumer names are per service; prefixing keeps them unique per namespace too. */
  consumer(name: string): string;
}

export type PlatformSubject = "ios" | "android" | "web";

export function streamNames(namespace = "", replication: StreamReplication = SINGLE_REPLICA): StreamNames {
  const subj = (s: string) => (namespace ? `${namespace}.${s}` : s);
  const stream = (s: string) => (namespace ? `${namespace}_${s}` : s);
  return {
    replication,
    eventsStream: stream("EVENTS"),
    appDeleted: subj("app.deleted.v2"),
    legacyAppDeleted: subj("app.deleted"),
    deviceInvalidated: subj("device.invalidated"),
    deliveryStream: stream("DELIVERY"),
    delivery: (platform) => subj(`delivery.${platform}`),
    outcomesStream: stream("OUTCOMES"),
    outcome: (campaignId) => subj(`outcome.${campaignId}`),
    outcomesWildcard: subj("outcome.*"),
    webhooksStream: stream("WEBHOOKS"),
    webhookEvents: subj("webhook.event"),
    consumer: (name) => stream(name),
  };
}

export type HeraldStreamConfig = Partial<StreamConfig> & { name: string; subjects: string[] };

/** The replica count and placement of every stream (StreamReplication). */
function replicated(names: StreamNames): Pick<StreamConfig, "num_replicas" | "placement"> {
  const { replicas, placementTags } = names.replication;
  return {
    num_replicas: replicas,
    ...(placementTags.length > 0 ? { placement: { cluster: "", tags: placementTags } } : {}),
  };
}

export function eventsStreamConfig(names: StreamNames): HeraldStreamConfig {
  return {
    ...replicated(names),
    name: names.eventsStream,
    subjects: [names.appDeleted, names.legacyAppDeleted, names.deviceInvalidated],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(7 * DAY_MS),
    duplicate_window: nanos(2 * MINUTE_MS),
  };
}

/** Work-queue retention: a batch is gone once a sender acks it. */
export function deliveryStreamConfig(names: StreamNames): HeraldStreamConfig {
  return {
    ...replicated(names),
    name: names.deliveryStream,
    subjects: (["ios", "android", "web"] as const).map((p) => names.delivery(p)),
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // Fan-out re-publishes after a crash under the same Nats-Msg-Id; keep ids long enough.
    duplicate_window: nanos(15 * MINUTE_MS),
  };
}

export function outcomesStreamConfig(names: StreamNames): HeraldStreamConfig {
  return {
    ...replicated(names),
    name: names.outcomesStream,
    subjects: [names.outcomesWildcard],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(15 * MINUTE_MS),
  };
}

/**
 * Webhook events: kept a week (a dispatcher down for days still gets them), de-duplicated
 * by the event id (Nats-Msg-Id) for an hour, so a producer retrying a publish, or
 * publishing again after a crash, sends an event once.
 */
export function webhooksStreamConfig(names: StreamNames): HeraldStreamConfig {
  return {
    ...replicated(names),
    name: names.webhooksStream,
    subjects: [names.webhookEvents],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(7 * DAY_MS),
    duplicate_window: nanos(60 * MINUTE_MS),
  };
}
