package dev.interlock.shedlock;

import dev.interlock.Lease;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a task running under an {@link InterlockLockProvider} lock can ask about its lock: above
 * all its fencing token, to pass along with every write the lock protects, so that a store which
 * remembers the highest token it has seen rejects a holder whose lock ran out while it was paused.
 *
 * <pre>
 * &#64;Scheduled(cron = "0 0 * * * *")
 * &#64;SchedulerLock(name = "hourly-export", lockAtMostFor = "10m")
 * void export() {
 *     long token = InterlockShedLock.requireToken();
 *     store.writeIfNewer(batch, token);              // the store refuses tokens lower than the last it saw
 * }
 * </pre>
 *
 * <p><b>Scope.</b> A lock is current on the thread that called {@code lock()} (ShedLock runs the
 * task there, as its {@code LockAssert} assumes), from {@code lock()} until {@code unlock()}, through
 * any number of {@code extend()} calls (the lease and its token stay the same), and while its lease
 * is valid: once the lock ran out ({@code lockAtMostFor}) or was lost, there is no current token,
 * and {@link #requireToken()} throws, so a task that checks before each write stops writing. Nested
 * locks stack: the innermost valid one is current. A task that hands work to other threads passes
 * the token along itself.
 */
public final class InterlockShedLock {
    /**
     * This thread's innermost lock; each links to the one it was taken under. Only the thread
     * itself reads or changes its chain (an unlock on another thread just marks the lock ended,
     * and the chain drops it at its next use). Null when empty, so no pool thread keeps a lock,
     * a lease or an object of this library alive.
     */
    private static final ThreadLocal<InterlockLockProvider.Held> TOP = new ThreadLocal<>();

    private InterlockShedLock() {}

    /** The fencing token of this thread's innermost lock from an {@link InterlockLockProvider}; empty if none. */
    public static OptionalLong currentToken() {
        InterlockLockProvider.Held h = innermost(null);
        return h == null ? OptionalLong.empty() : OptionalLong.of(h.lease.token());
    }

    /** The fencing token of the lock {@code name} held on this thread through an {@link InterlockLockProvider}; empty if none. */
    public static OptionalLong currentToken(String name) {
        InterlockLockProvider.Held h = innermost(name);
        return h == null ? OptionalLong.empty() : OptionalLong.of(h.lease.token());
    }

    /**
     * The fencing token of this thread's innermost lock: call it before each write the lock protects.
     *
     * @throws IllegalStateException if this thread holds no valid lock from an {@link InterlockLockProvider}
     */
    public static long requireToken() {
        InterlockLockProvider.Held h = innermost(null);
        if (h == null) {
            throw new IllegalStateException(
                    "no ShedLock lock from InterlockLockProvider is held on this thread: run the task"
                            + " through ShedLock (@SchedulerLock, LockingTaskExecutor) with an InterlockLockProvider and ask on the"
                            + " thread that runs it; a lock that ran out (lockAtMostFor) or was lost is no longer held");
        }
        return h.lease.token();
    }

    /**
     * The Interlock lease under this thread's innermost lock, for {@link Lease#isValid()},
     * {@link Lease#validUntil()} and {@link Lease#onLost}. Do not close it: ShedLock unlocks.
     */
    public static Optional<Lease> currentLease() {
        InterlockLockProvider.Held h = innermost(null);
        return h == null ? Optional.empty() : Optional.of(h.lease);
    }

    /** The innermost valid lock (of {@code name}, if not null), dropping ended and invalid ones on the way. */
    private static InterlockLockProvider.Held innermost(String name) {
        InterlockLockProvider.Held first = TOP.get();
        InterlockLockProvider.Held top = first;
        InterlockLockProvider.Held prev = null;
        for (InterlockLockProvider.Held h = top; h != null; h = h.below) {
            if (h.ended || !h.lease.isValid()) {
                // unlocked on another thread, ran out, lost, or its space was closed
                if (prev == null) {
                    top = h.below;
                } else {
                    prev.below = h.below;
                }
            } else {
                if (name == null || name.equals(h.lease.name())) {
                    if (top != first) {
                        store(top);
                    }
                    return h;
                }
                prev = h;
            }
        }
        if (top != first) {
            store(top);
        }
        return null;
    }

    /**
     * Sets (null when empty) rather than removes: a removed entry is made again, with a new weak
     * reference, at the thread's next lock. A null value keeps nothing of this library alive.
     */
    private static void store(InterlockLockProvider.Held top) {
        TOP.set(top);
    }

    static void pushed(InterlockLockProvider.Held h) {
        InterlockLockProvider.Held top = TOP.get();
        while (top != null && top.ended) {
            top = top.below;
        }
        h.below = top;
        TOP.set(h);
    }

    static void popped(InterlockLockProvider.Held h) {
        InterlockLockProvider.Held top = TOP.get();
        if (top == h) {
            store(h.below); // the usual case: the innermost lock is unlocked
            return;
        }
        InterlockLockProvider.Held prev = null;
        for (InterlockLockProvider.Held x = top; x != null; x = x.below) {
            if (x == h || x.ended) {
                if (prev == null) {
                    top = x.below;
                } else {
                    prev.below = x.below;
                }
            } else {
                prev = x;
            }
        }
        store(top);
    }
}
