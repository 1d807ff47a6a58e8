package dev.herald.core;

/** Draws in [0, 1) for back-off jitter; injectable for tests. */
public interface RandomSource {
    double nextDouble();

    RandomSource SYSTEM = Math::random;
}
