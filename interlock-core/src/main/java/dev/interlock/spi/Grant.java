package dev.interlock.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;

/**
 * A lock granted by a backend. The core calls {@link #renew} and {@link #release} on it, never
 * concurrently with each other, and {@link #release} at most once; any thread may make them.
 */
public interface Grant {
    /** The fencing token of this acquisition. */
    long token();

    /** When it was granted (wall clock, display only). */
    Instant acquiredAt();

    /**
     * How long before the try that returns it this grant's lease began where the backend keeps
     * it, in nanoseconds: for a grant made before that try (a release that handed the lock straight
     * to this waiter), measured by the backend when the try returns; 0 (the default) when the
     * lease began during the try. The core counts the lease from the try's start less this, so a
     * holder never believes in a lease that the backend's clock has already ended.
     */
    default long leaseAgeNanos() {
        return 0;
    }

    /**
     * How this grant stays held; null (the default) means as its backend's
     * {@link LockBackend#leaseKind()} says.
     *
     * @deprecated override {@link LockBackend#leaseKind()}: every grant of a backend stays held the
     *     same way, and the core needs to know it before any grant. A non-null answer here is still
     *     honoured, for backends written before that method.
     */
    @Deprecated(since = "0.2.0")
    default LeaseKind leaseKind() {
        return null;
    }

    /**
     * The longest lease {@link #renew} can extend this grant to; {@code null} (the default) means
     * any. A backend whose others judge a holder by the lease it recorded at acquisition
     * ({@code dir:}) returns that lease: the core then refuses to lengthen the lease beyond it,
     * which would let the holder believe in a lock that others may already reclaim.
     */
    default Duration maxLease() {
        return null;
    }

    /**
     * Extends the lease to {@code lease} from now (lease-based backends), or verifies that the
     * lock is still ours (kernel locks, sessions). Must check the owner: never extends someone
     * else's lock.
     *
     * @throws dev.interlock.LockLostException if the lock is no longer ours
     * @throws dev.interlock.LockBackendException if the backend could not be reached
     */
    void renew(Duration lease);

    /**
     * {@link #renew(Duration)} with a time limit: the core declares the lease lost when the loss
     * point comes whether or not this call returned, so a backend should give up (socket or query
     * timeout) after about {@code timeoutNanos} rather than hang. The default ignores the limit.
     */
    default void renew(Duration lease, long timeoutNanos) {
        renew(lease);
    }

    /**
     * Releases the lock if it is still ours; does nothing to a lock now held by someone else.
     *
     * @throws dev.interlock.LockBackendException if the backend could not be reached
     */
    void release();

    /**
     * {@link #release()}, telling whether it freed anything: false if the lock was no longer this
     * grant's (its lease had run out, it was broken, or it had passed to another holder), so that
     * the owner-checked release changed nothing. The core calls this one, and says what happened
     * from its answer. The default calls {@link #release()} and answers true: a backend that does
     * not override it cannot tell.
     *
     * @throws dev.interlock.LockBackendException if the backend could not be reached
     */
    default boolean releaseIfOwned() {
        release();
        return true;
    }

    /**
     * A file descriptor whose inheritance by a child process makes the child hold this lock too
     * (kernel locks: the flock(2) lock belongs to the open file description). Used by
     * {@code interlock run} so that a command keeps its lock even if the tool itself is killed.
     * Empty for backends whose locks cannot be inherited (see
     * {@link dev.interlock.Capability#INHERITABLE_DESCRIPTOR}).
     */
    default OptionalInt inheritableDescriptor() {
        return OptionalInt.empty();
    }
}
