package dev.herald.core;

/**
 * Where the library keeps its record (docs/sdk-protocol.md §3): app-private storage that is
 * excluded from backups. On Android the glue uses SharedPreferences in the no-backup
 * directory; {@link FileKeyValueStore} and {@link MemoryKeyValueStore} serve the JVM and
 * tests. Implementations must be safe to call from any thread.
 */
public interface KeyValueStore {
    /** The value under {@code key}, or null. */
    String get(String key);

    /** Stores {@code value} under {@code key}; null removes it. Must be durable on return. */
    void put(String key, String value);
}
