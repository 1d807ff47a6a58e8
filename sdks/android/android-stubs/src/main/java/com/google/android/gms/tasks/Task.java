/*
 * JVM stand-in for the Firebase Cloud Messaging (firebase-messaging 23.x, play-services-tasks
 * 18.x) class of the same name: only the members Herald's glue uses, with the real
 * signatures, behaving as a simple recording fake. Never shipped.
 */
package com.google.android.gms.tasks;

/** Abstract on Android; a completed-result fake here. */
public abstract class Task<TResult> {
    public abstract boolean isComplete();

    public abstract TResult getResult();
}
