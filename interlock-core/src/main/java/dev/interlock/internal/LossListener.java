package dev.interlock.internal;

import dev.interlock.LockLostException;
import dev.interlock.spi.support.Log;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A lease's loss listener that runs at most once, whoever fires it first. A second caller on
 * another thread waits (up to {@link #WAIT_NANOS}) until the first run has finished, so that
 * "the listeners ran before renew() threw" holds even when the loss was pushed by the backend and
 * its listeners are still running on the notifier.
 */
final class LossListener {
    private static final Log log = Log.of(DefaultLease.class);
    /** How long a caller that learns of a loss waits for a listener already running elsewhere. */
    static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Consumer<LockLostException> listener;
    private final String backendName;
    private final String name;
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Thread runner;
    private final AtomicBoolean fired = new AtomicBoolean();

    LossListener(Consumer<LockLostException> listener, String backendName, String name) {
        this.listener = listener;
        this.backendName = backendName;
        this.name = name;
    }

    void fire(LockLostException e) {
        if (fired.compareAndSet(false, true)) {
            runner = Thread.currentThread();
            try {
                listener.accept(e);
            } catch (RuntimeException ex) {
                log.error("{} - lost-lock listener of '{}' failed", backendName, name, ex);
            } finally {
                done.countDown();
            }
            return;
        }
        if (runner == Thread.currentThread()) {
            return; // the listener itself called renew()
        }
        awaitDone();
    }

    private void awaitDone() {
        long deadline = System.nanoTime() + WAIT_NANOS;
        boolean interrupted = false;
        try {
            for (long left = WAIT_NANOS; left > 0; left = deadline - System.nanoTime()) {
                try {
                    if (done.await(left, TimeUnit.NANOSECONDS)) {
                        return;
                    }
                } catch (InterruptedException ie) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
