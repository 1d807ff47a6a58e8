/*
 * JVM stand-in for the Firebase Cloud Messaging (firebase-messaging 23.x, play-services-tasks
 * 18.x) class of the same name: only the members Herald's glue uses, with the real
 * signatures, behaving as a simple recording fake. Never shipped.
 */
package com.google.android.gms.tasks;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public final class Tasks {
    public static <TResult> Task<TResult> forResult(final TResult result) {
        return new Task<TResult>() {
            @Override
            public boolean isComplete() {
                return true;
            }

            @Override
            public TResult getResult() {
                return result;
            }
        };
    }

    public static <TResult> TResult await(Task<TResult> task, long timeout, TimeUnit unit)
            throws ExecutionException, InterruptedException, TimeoutException {
        if (!task.isComplete()) throw new TimeoutException();
        return task.getResult();
    }
}
