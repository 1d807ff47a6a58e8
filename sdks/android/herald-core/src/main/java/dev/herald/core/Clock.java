package dev.herald.core;

/** The time, injectable for tests. */
public interface Clock {
    long nowMillis();

    Clock SYSTEM = System::currentTimeMillis;
}
