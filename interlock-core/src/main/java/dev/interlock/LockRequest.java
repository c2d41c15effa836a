package dev.interlock;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Options for one acquisition, from {@link LockSpace#lock(String)}. Not thread-safe; build and
 * use it on one thread. Each terminal call ({@link #tryAcquire()}, {@link #acquire(Duration)},
 * {@link #acquire()}) makes an independent acquisition.
 */
public interface LockRequest {
    /** The largest semaphore {@link #limit(int)}: every holder is a record the backend lists and checks. */
    int MAX_LIMIT = 10_000;

    /** Shared or exclusive (default exclusive). */
    LockRequest mode(Mode mode);

    /** Same as {@code mode(Mode.SHARED)}. */
    default LockRequest shared() {
        return mode(Mode.SHARED);
    }

    /**
     * Makes this acquisition one permit of a counting semaphore of {@code limit} permits on the
     * name: it is granted while fewer than {@code limit} others hold the name, and gives a
     * {@link Lease} like any other (its own lease, renewal, {@code onLost}, and a fencing token
     * greater than every earlier grant of the name, whoever held it). Waiters are served in
     * arrival order. The limit belongs to the name: while the name is held, a request stating
     * another limit, or a plain lock request on a semaphore name (and the reverse), throws
     * {@link LimitMismatchException} and is granted nothing; a new limit takes effect once no
     * holder remains. A permit is always exclusive: {@link #shared()} with a limit is refused.
     * Backends without {@link Capability#SEMAPHORE} refuse a limit with
     * {@link UnsupportedOperationException} (see docs/semaphores.md).
     *
     * <p>The default, for requests implemented outside Interlock (decorators written before this
     * method), refuses: such a class passes the call on to the request it wraps.
     *
     * @throws IllegalArgumentException if {@code limit} is below 1 or above {@link #MAX_LIMIT}
     */
    default LockRequest limit(int limit) {
        throw new UnsupportedOperationException(getClass().getName()
                + " does not pass limit(int) on: semaphores need it to delegate to the request it wraps");
    }

    /**
     * The lease duration on lease-based backends (default: the backend's, e.g. 30s). The lease is
     * renewed in the background at a third of this period unless {@link #fixedLease()} is set.
     * Ignored by kernel locks, which do not expire. A renewed lease must be at least 100ms and a
     * fixed one at least 1ms; the acquisition throws {@link IllegalArgumentException} otherwise.
     *
     * @throws IllegalArgumentException if not positive
     */
    LockRequest lease(Duration lease);

    /** Do not renew in the background: the lock frees itself after the lease unless renewed by hand. */
    LockRequest fixedLease();

    /**
     * Keeps the lock until {@code duration} after it was acquired even if the lease is closed
     * sooner (ShedLock's {@code lockAtLeastFor}): the same job fired on several hosts whose clocks
     * differ by less than that runs once. On lease-based backends {@link Lease#close()} then
     * renews the lease one last time to end at that moment and leaves it to expire, so the lock
     * stays held even if this process exits; locks that do not expire ({@code flock:}) are
     * released at that moment by the space, or when it closes. On {@code dir:}, where a lease
     * cannot be lengthened after acquisition, the lock is kept at most one lease after the close.
     *
     * @throws IllegalArgumentException if negative
     */
    LockRequest holdAtLeast(Duration duration);

    /** A listener told when the lease is lost (see {@link Lease#onLost}). May be called several times. */
    LockRequest onLost(Consumer<LockLostException> listener);

    /** One attempt; empty if the lock is busy. Never waits. */
    Optional<Lease> tryAcquire();

    /**
     * Waits up to {@code timeout} for the lock. A zero timeout makes one attempt.
     *
     * @throws LockTimeoutException if not acquired in time; nothing is held
     * @throws InterruptedException if interrupted while waiting; nothing is held
     */
    Lease acquire(Duration timeout) throws InterruptedException;

    /** Waits as long as it takes. @throws InterruptedException if interrupted; nothing is held */
    Lease acquire() throws InterruptedException;
}
