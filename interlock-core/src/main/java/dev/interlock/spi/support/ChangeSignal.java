package dev.interlock.spi.support;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A version counter that waiters can wait on: the wake-up primitive of {@code Attempt.await}.
 * Whoever changes what a waiter waits for (a release, a notice from the server, a waiter leaving
 * the queue) calls {@link #signal()}; a waiter reads {@link #version()} <em>before</em> its try
 * and, after a failed try, calls {@link #awaitChange(long, long)} with what it read, so a change
 * made between the try and the wait ends the wait at once instead of being missed.
 *
 * <pre>{@code
 * long seen = signal.version();        // before the try
 * Optional<Grant> g = store.tryTake(); // one atomic try
 * if (g.isEmpty()) signal.awaitChange(seen, nanos);
 * }</pre>
 *
 * <p>It waits on a {@link ReentrantLock} {@link Condition}, never {@code synchronized} +
 * {@code wait}, which pins the carrier thread of a virtual thread on JDK 21 to 23. A signal with
 * nobody waiting costs one atomic increment and takes no lock. Thread-safe.
 */
public final class ChangeSignal {
    private final AtomicLong version = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /**
     * Threads inside {@link #awaitChange}; changed under {@link #lock}. Volatile, as is the
     * version: a signaller writes the version then reads this, a waiter writes this then reads
     * the version, so one of them always sees the other and no wake-up is lost.
     */
    private volatile int waiters;

    /** The current version: read it before a try, and pass it to {@link #awaitChange} after. */
    public long version() {
        return version.get();
    }

    /** Something changed: the version moves on and every waiter returns. */
    public void signal() {
        version.incrementAndGet();
        if (waiters > 0) {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Waits until the version differs from {@code seen}, at most {@code nanos} nanoseconds.
     *
     * @return true if it changed, false if the time ran out first
     * @throws InterruptedException if the thread is interrupted while it waits (a change that has
     *     already happened is returned without looking at the interrupt)
     */
    public boolean awaitChange(long seen, long nanos) throws InterruptedException {
        if (version.get() != seen) {
            return true;
        }
        if (nanos <= 0) {
            return false;
        }
        lock.lockInterruptibly();
        try {
            waiters++;
            try {
                long left = nanos;
                while (version.get() == seen) {
                    if (left <= 0) {
                        return false;
                    }
                    left = changed.awaitNanos(left);
                }
                return true;
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }
}
