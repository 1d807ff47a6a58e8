package dev.herald.core;

/** An answer of the core, delivered on its background thread (post to the main thread to touch UI). */
public interface Callback<T> {
    void onResult(T result);
}
