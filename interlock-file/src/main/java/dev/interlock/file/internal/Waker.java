package dev.interlock.file.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Internal API of Interlock (not for applications; may change in any release): what one waiting
 * attempt blocks on. A change counter that {@link #wake()} moves on; a waiter reads
 * {@link #seq()} when its try begins and then {@linkplain #awaitChange waits for it to move}, so a
 * wake-up between the try and the wait is never missed.
 *
 * <p>Built on a {@link ReentrantLock} and its {@link Condition}, not on {@code synchronized} and
 * {@code Object.wait}: a virtual thread waiting here unmounts from its carrier (on JDK 21 to 23 a
 * virtual thread in {@code Object.wait} pins it).
 */
public final class Waker {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile long seq;

    /** The current value of the change counter. */
    public long seq() {
        return seq;
    }

    /** Moves the counter on and wakes every thread waiting for it to change. */
    public void wake() {
        lock.lock();
        try {
            seq++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the counter differs from {@code seen} or {@code nanos} have passed.
     *
     * @return true if it changed
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public boolean awaitChange(long seen, long nanos) throws InterruptedException {
        if (seq != seen) {
            return true;
        }
        long left = nanos;
        lock.lockInterruptibly();
        try {
            while (seq == seen) {
                if (left <= 0) {
                    return false;
                }
                left = changed.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }
}
