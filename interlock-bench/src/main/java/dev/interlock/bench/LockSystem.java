package dev.interlock.bench;

import dev.interlock.Lease;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import java.util.function.UnaryOperator;

/**
 * A lock implementation under measurement (Interlock, a peer, or a raw floor), on one server.
 * It hands each thread (or process) its own {@link Locker}; closing the system frees its pool.
 */
interface LockSystem extends AutoCloseable {
    /** How the results name it. */
    String label();

    /** A locker for one thread. */
    Locker newLocker() throws Exception;

    @Override
    void close();

    /** One thread's handle on a lock system: holds at most one lock at a time. */
    interface Locker extends AutoCloseable {
        /** Blocks until this thread holds {@code name} exclusively (each system by its own means of waiting). */
        void acquire(String name) throws Exception;

        /** Releases what {@link #acquire} took. */
        void release() throws Exception;

        @Override
        default void close() throws Exception {}
    }

    /**
     * Interlock on {@code locks} (closed with the system): each locker acquires exclusively and
     * waits as long as it takes.
     */
    static LockSystem interlock(LockSpace locks, String label) {
        return interlock(locks, label, UnaryOperator.identity());
    }

    /** {@link #interlock(LockSpace, String)} with options on each request (a {@code limit(n)}: one permit of n). */
    static LockSystem interlock(LockSpace locks, String label, UnaryOperator<LockRequest> options) {
        return new LockSystem() {
            @Override
            public String label() {
                return label;
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    Lease lease;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        lease = options.apply(locks.lock(name)).acquire();
                    }

                    @Override
                    public void release() {
                        lease.close();
                    }
                };
            }

            @Override
            public void close() {
                locks.close();
            }
        };
    }

    /**
     * How a system without a way to wait (a "skip" lock: ShedLock, the raw floors) is made to wait:
     * {@code 0} retries at once (the most it can do, at the price of a core and the server's time),
     * otherwise sleeps that many milliseconds between tries (what an application would write).
     */
    static void pause(long retryMillis) throws InterruptedException {
        if (retryMillis > 0) {
            Thread.sleep(retryMillis);
        } else if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }
}
