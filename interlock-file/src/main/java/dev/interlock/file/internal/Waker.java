package dev.interlock.file.internal;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Internal API of Interlock (not for applications; may change in any release): what one waiting
 * attempt blocks on. A change counter that {@link #wake()} moves on; a waiter reads
 * {@link #seq()} when its try begins and then {@linkplain #awaitChange waits for it to move}, so a
 * wake-up between the try and the wait is never missed.
 *
 * <p>A waker that has an inotify watch waits through the process's {@link InotifyWatcher}: the
 * first waiting thread of the process reads inotify itself (one hop from the kernel's event to the
 * waiter), the others sleep here until it passes their events on or hands the reading over.
 *
 * <p>Built on a {@link ReentrantLock} and its {@link Condition}, not on {@code synchronized} and
 * {@code Object.wait}: a virtual thread waiting here unmounts from its carrier (on JDK 21 to 23 a
 * virtual thread in {@code Object.wait} pins it).
 */
public final class Waker {
    /** Results of {@link #awaitLocally}. */
    static final int CHANGED = 0;

    static final int TIMED_OUT = 1;
    static final int PROMOTED = 2;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile long seq;
    /** Set once this waker has an inotify watch: its waits go through the watcher from then on. */
    volatile boolean watched;
    /** True while this waker's thread is the one reading inotify: a wake-up must interrupt its poll(2). */
    volatile boolean leading;
    /** The timer of this waker's thread while it sleeps in flock(2) ({@link KernelWait}): a wake-up fires it. */
    volatile KernelWait.Timer blocked;
    /** The watcher asks this waiting thread to take over reading inotify. Guarded by lock. */
    private boolean promoted;

    /** The current value of the change counter. */
    public long seq() {
        return seq;
    }

    /** Moves the counter on and wakes every thread waiting for it to change. */
    public void wake() {
        bump();
        if (leading) {
            InotifyWatcher.process().kick();
        }
        KernelWait.Timer t = blocked;
        if (t != null) {
            t.fire();
        }
    }

    /** Moves the counter on and wakes the threads waiting on this waker's condition (not a poll). */
    void bump() {
        lock.lock();
        try {
            seq++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Asks the thread waiting here to take over reading inotify (its wait ends without a change). */
    void promote() {
        lock.lock();
        try {
            promoted = true;
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
        if (watched) {
            return InotifyWatcher.process().await(this, seen, nanos);
        }
        return awaitLocally(seen, nanos, false) == CHANGED;
    }

    /**
     * Sleeps on this waker's condition until the counter moves, the time is up, or (if
     * {@code promotable}) the watcher {@linkplain #promote() promotes} this thread.
     */
    int awaitLocally(long seen, long nanos, boolean promotable) throws InterruptedException {
        long left = nanos;
        lock.lockInterruptibly();
        try {
            while (seq == seen) {
                if (promotable && promoted) {
                    promoted = false;
                    return PROMOTED;
                }
                if (left <= 0) {
                    return TIMED_OUT;
                }
                left = changed.awaitNanos(left);
            }
            return CHANGED;
        } finally {
            lock.unlock();
        }
    }
}
