package dev.interlock.shedlock;

import dev.interlock.Lease;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a task running under an {@link InterlockLockProvider} lock can ask about its lock: above
 * all its fencing token, to pass along with every write the lock protects, so that a store which
 * remembers the highest token it has seen rejects a holder whose lock ran out while it was paused.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 * * * *")
 * @SchedulerLock(name = "hourly-export", lockAtMostFor = "10m")
 * void export() {
 *     long token = InterlockShedLock.requireToken();
 *     store.writeIfNewer(batch, token);              // the store refuses tokens lower than the last it saw
 * }
 * }</pre>
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
    private static final ThreadLocal<ArrayDeque<InterlockLockProvider.Held>> CURRENT = ThreadLocal.withInitial(ArrayDeque::new);

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
            throw new IllegalStateException("no ShedLock lock from InterlockLockProvider is held on this thread: run the task"
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

    private static InterlockLockProvider.Held innermost(String name) {
        ArrayDeque<InterlockLockProvider.Held> stack = CURRENT.get();
        for (Iterator<InterlockLockProvider.Held> it = stack.iterator(); it.hasNext(); ) {
            InterlockLockProvider.Held h = it.next();
            if (h.ended || !h.lease.isValid()) {
                it.remove(); // unlocked on another thread, ran out, lost, or its space was closed
            } else if (name == null || name.equals(h.lease.name())) {
                return h;
            }
        }
        if (stack.isEmpty()) {
            CURRENT.remove();
        }
        return null;
    }

    static void pushed(InterlockLockProvider.Held h) {
        ArrayDeque<InterlockLockProvider.Held> stack = CURRENT.get();
        stack.removeIf(x -> x.ended);
        stack.push(h);
    }

    static void popped(InterlockLockProvider.Held h) {
        ArrayDeque<InterlockLockProvider.Held> stack = CURRENT.get();
        stack.remove(h);
        stack.removeIf(x -> x.ended);
        if (stack.isEmpty()) {
            CURRENT.remove();
        }
    }
}
