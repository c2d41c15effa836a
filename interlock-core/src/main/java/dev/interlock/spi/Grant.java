package dev.interlock.spi;

import java.time.Duration;
import java.time.Instant;

/**
 * A lock granted by a backend. The core calls {@link #renew} and {@link #release} on it, never
 * concurrently with each other, and {@link #release} at most once.
 */
public interface Grant {
    /** The fencing token of this acquisition. */
    long token();

    /** When it was granted (wall clock, display only). */
    Instant acquiredAt();

    /**
     * Extends the lease to {@code lease} from now (lease-based backends), or verifies that the
     * lock is still ours (kernel locks). Must check the owner: never extends someone else's lock.
     *
     * @throws dev.interlock.LockLostException if the lock is no longer ours
     * @throws dev.interlock.LockBackendException if the backend could not be reached
     */
    void renew(Duration lease);

    /**
     * Releases the lock if it is still ours; does nothing to a lock now held by someone else.
     *
     * @throws dev.interlock.LockBackendException if the backend could not be reached
     */
    void release();

    /**
     * A file descriptor whose inheritance by a child process makes the child hold this lock too
     * (kernel locks: the flock(2) lock belongs to the open file description). Used by
     * {@code interlock run} so that a command keeps its lock even if the tool itself is killed.
     * Empty for backends whose locks cannot be inherited.
     */
    default java.util.OptionalInt inheritableDescriptor() {
        return java.util.OptionalInt.empty();
    }
}
