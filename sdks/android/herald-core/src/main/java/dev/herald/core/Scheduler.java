package dev.herald.core;

/**
 * Runs the core's work, one task at a time and in order, off the app's main thread:
 * {@link ExecutorScheduler} by default, a manual one with virtual time in tests.
 */
public interface Scheduler {
    /** Runs {@code task} after the tasks already queued. */
    void execute(Runnable task);

    /** Runs {@code task} after {@code delayMs} (retry back-off); returns a handle to cancel it. */
    Cancellable schedule(Runnable task, long delayMs);

    interface Cancellable {
        void cancel();
    }
}
