package dev.herald.core;

import java.util.PriorityQueue;

/** A scheduler with virtual time: tasks run only when the test says so, on the test's thread. */
final class ManualScheduler implements Scheduler, Clock {
    private static final class Task implements Comparable<Task> {
        final long at;
        final long seq;
        final Runnable run;
        boolean cancelled;

        Task(long at, long seq, Runnable run) {
            this.at = at;
            this.seq = seq;
            this.run = run;
        }

        @Override
        public int compareTo(Task o) {
            return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
        }
    }

    private final PriorityQueue<Task> queue = new PriorityQueue<>();
    private long now = 1_800_000_000_000L;
    private long seq;
    /** The delays of every schedule() call, in order. */
    final java.util.List<Long> delays = new java.util.ArrayList<>();

    @Override
    public long nowMillis() {
        return now;
    }

    void setNow(long ms) {
        now = ms;
    }

    @Override
    public void execute(Runnable task) {
        queue.add(new Task(now, seq++, task));
    }

    @Override
    public Cancellable schedule(Runnable task, long delayMs) {
        delays.add(delayMs);
        final Task t = new Task(now + delayMs, seq++, task);
        queue.add(t);
        return () -> t.cancelled = true;
    }

    /** Runs every task due now (and those they queue for now). */
    void runDue() {
        while (!queue.isEmpty() && queue.peek().at <= now) {
            Task t = queue.poll();
            if (!t.cancelled) t.run.run();
        }
    }

    /** Whether a delayed task (a retry) waits. */
    boolean hasDelayed() {
        for (Task t : queue) if (!t.cancelled && t.at > now) return true;
        return false;
    }

    /** Moves time to the next delayed task and runs what is due then. */
    boolean fireNext() {
        runDue();
        Task next = null;
        for (Task t : queue) if (!t.cancelled && (next == null || t.compareTo(next) < 0)) next = t;
        if (next == null) return false;
        now = Math.max(now, next.at);
        runDue();
        return true;
    }

    void advance(long ms) {
        now += ms;
        runDue();
    }
}
