package dev.interlock;

import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;
import java.util.function.Consumer;

/**
 * One successful acquisition of a named lock. Close it (try-with-resources) to release.
 *
 * <p><b>Thread-safety and ownership:</b> a lease belongs to the acquisition, not to a thread: any
 * thread may renew or close it. Every release and renewal is checked against this lease's own
 * {@link #owner()} by the backend, so a late close can never free a lock that someone else
 * acquired meanwhile. Locks are not reentrant: acquiring a name you already hold waits like any
 * other contender.
 *
 * <p><b>Validity:</b> a lease is valid from acquisition until it is closed or lost. Lease-based
 * backends renew it in the background (unless a fixed lease was asked for); if renewal keeps
 * failing, or a fixed lease runs, until a fifth of the lease remains (its <em>loss point</em>, on
 * the local monotonic clock), the lease is lost. Kernel locks ({@code flock:}) do not expire; they
 * are checked periodically and declared lost if the lock file was removed or replaced.
 *
 * <p><b>The lease rule:</b> a lease lost at its loss point tells its holder at once
 * ({@link #isValid()} is false from that instant, and the {@link #onLost lost listeners} run) and
 * is never released to others before its end (its deadline) unless the holder closes it. The fifth
 * that remains is the holder's time to stop; closing the lease says it has, and frees the lock at
 * once (or at its {@link LockRequest#holdAtLeast hold-at-least} time). A loss the backend reports
 * (the lock was broken, taken over, its file removed) is released at once, owner-checked. A lease
 * whose loss point passed while this process was paused is lost all the same: a {@link #close()}
 * or {@link #renew()} that comes before the background timer reports the loss first, once.
 *
 * <p><b>Fencing:</b> {@link #token()} strictly increases with every acquisition of the name, so a
 * downstream system that remembers the highest token it has seen can reject writes from a
 * holder whose lease ran out while it was paused.
 */
public interface Lease extends AutoCloseable {
    /** The lock name. */
    String name();

    /** Shared or exclusive. */
    Mode mode();

    /** Who holds this lease; unique to this acquisition. */
    Owner owner();

    /** The fencing token: strictly greater than the token of every earlier acquisition of this name. */
    long token();

    /** When it was acquired (this host's wall clock; for display). */
    Instant acquiredAt();

    /**
     * Until when the lock is guaranteed if it is not renewed again, translated to this host's wall
     * clock for display; {@link Instant#MAX} for locks that do not expire ({@code flock:}). The
     * guarantee itself is kept on the monotonic clock.
     */
    Instant validUntil();

    /**
     * True while the lease is held and its loss point (a fifth of the lease before its deadline)
     * has not passed on the monotonic clock, whether or not the background timer has run. False
     * once closed or lost. Cheap; does not contact the backend.
     */
    boolean isValid();

    /**
     * Extends the lease now (lease-based backends) or verifies that the lock is still ours
     * (kernel locks).
     *
     * @throws LockLostException if the lock is gone; the lease is then lost and listeners have run
     * @throws LockBackendException if the backend could not be reached; the lease stays valid until its deadline
     * @throws IllegalStateException if the lease was closed
     */
    void renew();

    /**
     * Extends the lease to {@code lease} from now, and makes it the lease of later renewals
     * (lease-based backends); verifies the lock like {@link #renew()} on kernel locks.
     *
     * @throws IllegalArgumentException if {@code lease} is not positive
     * @throws LockLostException if the lock is gone; the lease is then lost and listeners have run
     * @throws LockBackendException if the backend could not be reached; the lease stays valid until its deadline
     * @throws IllegalStateException if the lease was closed
     */
    void renew(Duration lease);

    /**
     * Registers a listener told once, on a background thread, when this lease is lost (not when it
     * is closed; but a lease lost before it was closed is told so, on the closing thread if no
     * background thread has told it yet). If the lease is already lost, the listener runs at once
     * on the calling thread.
     *
     * @return this lease
     */
    Lease onLost(Consumer<LockLostException> listener);

    /**
     * Moves the {@link LockRequest#holdAtLeast hold-at-least} time to {@code duration} from now,
     * earlier or later than the one given at acquisition ({@code Duration.ZERO}: close releases at
     * once), for APIs that renegotiate it while the lock is held (ShedLock's
     * {@code extend(lockAtMostFor, lockAtLeastFor)}).
     *
     * @return false if this lease does not support it (nothing was changed); the core's leases do
     * @throws IllegalArgumentException if {@code duration} is negative
     */
    default boolean holdAtLeastFromNow(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("hold-at-least must not be negative, was " + duration);
        }
        return false;
    }

    /**
     * The open file descriptor that holds this lock in the kernel, for a child process to inherit
     * so that the lock stays held while the child lives, on spaces with
     * {@link Capability#INHERITABLE_DESCRIPTOR} ({@code flock:}); empty elsewhere, or once closed.
     * {@code interlock run} hands it to its command this way.
     */
    default OptionalInt inheritableDescriptor() {
        return OptionalInt.empty();
    }

    /**
     * Releases the lock. Idempotent: the second and later calls do nothing. Safe from any thread.
     * A lease that was lost before it was closed (see the lease rule above) reports the loss to
     * its listeners, once, and is released, owner-checked, so others need not wait for its end.
     *
     * @throws LockBackendException if the backend failed to release; a lease-based lock then frees when its lease runs out
     */
    @Override
    void close();
}
