import { RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream";

/**
 * JetStream names, in one place. A namespace (env NATS_NAMESPACE, empty by default)
 * prefixes every stream and subject, so that tests, or two Herald installs sharing one
 * NATS, never see each other's messages.
 */
export interface StreamNames {
  /** Domain events that more than one service reacts to. */
  eventsStream: string;
  appDeleted: string;
  deviceInvalidated: string;
  /** Consumer names are per service; prefixing keeps them unique per namespace too. */
  consumer(name: string): string;
}

export function streamNames(namespace = ""): StreamNames {
  const subj = (s: string) => (namespace ? `${namespace}.${s}` : s);
  const stream = (s: string) => (namespace ? `${namespace}_${s}` : s);
  return {
    eventsStream: stream("EVENTS"),
    appDeleted: subj("app.deleted"),
    deviceInvalidated: subj("device.invalidated"),
    consumer: (name) => stream(name),
  };
}

export function eventsStreamConfig(names: StreamNames): Partial<StreamConfig> & { name: string; subjects: string[] } {
  return {
    name: names.eventsStream,
    subjects: [names.appDeleted, names.deviceInvalidated],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: 7 * 24 * 3600 * 1e9,
    duplicate_window: 2 * 60 * 1e9,
  };
}
