package dev.interlock.spi.support;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * For backends (not for applications): a one-thread timer
 * for tasks that are scheduled and withdrawn far more often than they run (a lease's renewal and
 * loss check, a statement's time limit), made so that doing so wakes no thread.
 *
 * <p>{@link ScheduledThreadPoolExecutor} signals its thread whenever a new task becomes the
 * earliest of its queue. In a loop, the previous task has just been withdrawn, so every new one
 * would be the earliest of an empty queue, and the thread would wake only to wait again (a futex
 * wake and a context switch per task). A pacing task, run every {@link #PACE_MS} ms, stays the
 * earliest instead, so tasks seconds away are queued and removed without a signal. Withdrawn
 * tasks leave the queue at once ({@code removeOnCancel}).
 */
public final class PacedTimer {
    /** How often the timer's thread wakes while nothing else is due. */
    public static final long PACE_MS = 1000;

    private PacedTimer() {}

    /** The pacing task: nothing to do. A class, not a lambda (linking one costs a command-line start on JDK 17). */
    private static final class Pace implements Runnable {
        @Override
        public void run() {}
    }

    /** A started one-thread timer with its pacing task; its thread comes from {@code threads}. */
    public static ScheduledThreadPoolExecutor create(ThreadFactory threads) {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, threads);
        e.setRemoveOnCancelPolicy(true);
        e.scheduleWithFixedDelay(new Pace(), PACE_MS, PACE_MS, TimeUnit.MILLISECONDS);
        return e;
    }
}
