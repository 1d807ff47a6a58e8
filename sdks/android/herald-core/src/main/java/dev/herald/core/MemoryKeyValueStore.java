package dev.herald.core;

import java.util.HashMap;
import java.util.Map;

/** A store that forgets everything when the process ends: for tests. */
public final class MemoryKeyValueStore implements KeyValueStore {
    private final Map<String, String> values = new HashMap<>();

    @Override
    public synchronized String get(String key) {
        return values.get(key);
    }

    @Override
    public synchronized void put(String key, String value) {
        if (value == null) values.remove(key);
        else values.put(key, value);
    }
}
