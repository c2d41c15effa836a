package dev.interlock;

import dev.interlock.spi.support.LockNames;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A backend plus its namespace (a directory, a table, a key prefix), opened from a URI by
 * {@link Interlock#open(String)}. Thread-safe; one instance is meant to be shared by the whole
 * application. Closing it stops its background threads; leases still open are released.
 *
 * <p><b>Names</b> are any non-empty Unicode string of at most {@value #MAX_NAME_LENGTH} characters
 * without NUL or other control characters. The mapping from names to files, keys or rows is
 * injective: {@code a.b}, {@code a_b}, {@code a/b} and {@code ../x} are four different locks, and
 * none escapes the namespace. A name breaking a rule gets an {@link InvalidLockNameException}.
 *
 * <p><b>Waiting</b> is interruptible and woken promptly when the lock is released. A timed out or
 * interrupted acquire leaves nothing held.
 */
public interface LockSpace extends AutoCloseable {
    /** The longest lock name, in UTF-16 characters. */
    int MAX_NAME_LENGTH = 1024;

    /** The URI this space was opened from, with any password masked. */
    String uri();

    /** What this space offers beyond the common contract (break, strict fencing, waiter counts...). */
    Set<Capability> capabilities();

    /** Starts building an acquisition of {@code name} with options (mode, lease, listeners). */
    LockRequest lock(String name);

    /**
     * Acquires {@code name} exclusively, waiting up to {@code timeout}.
     *
     * @throws LockTimeoutException if not acquired within the timeout; nothing is held
     * @throws InterruptedException if interrupted while waiting; nothing is held
     * @throws InvalidLockNameException if the name breaks a rule
     * @throws LockBackendException if the backend failed
     */
    default Lease acquire(String name, Duration timeout) throws InterruptedException {
        return lock(name).acquire(timeout);
    }

    /** Acquires {@code name} in {@code mode}, waiting up to {@code timeout}. See {@link #acquire(String, Duration)}. */
    default Lease acquire(String name, Mode mode, Duration timeout) throws InterruptedException {
        return lock(name).mode(mode).acquire(timeout);
    }

    /** Acquires {@code name} exclusively, waiting as long as it takes (interruptible). */
    default Lease acquire(String name) throws InterruptedException {
        return lock(name).acquire();
    }

    /** Acquires {@code name} in {@code mode}, waiting as long as it takes (interruptible). */
    default Lease acquire(String name, Mode mode) throws InterruptedException {
        return lock(name).mode(mode).acquire();
    }

    /** Tries once to acquire {@code name} exclusively; empty if someone else holds it. Never waits. */
    default Optional<Lease> tryAcquire(String name) {
        return lock(name).tryAcquire();
    }

    /** Tries once to acquire {@code name} in {@code mode}; empty if it conflicts with a holder. Never waits. */
    default Optional<Lease> tryAcquire(String name, Mode mode) {
        return lock(name).mode(mode).tryAcquire();
    }

    /**
     * {@code name} as a {@link java.util.concurrent.locks.Lock} (exclusive), for code written
     * against that interface; reentrant per thread and per view (see {@link LockView}). Validates
     * the name now; acquires nothing.
     */
    default LockView asLock(String name) {
        return asLock(name, Mode.EXCLUSIVE);
    }

    /** {@code name} as a {@link java.util.concurrent.locks.Lock} in {@code mode}; see {@link #asLock(String)}. */
    default LockView asLock(String name, Mode mode) {
        return new LockView(this, LockNames.validate(name), mode);
    }

    /** Who holds {@code name} now (empty holders if free). Reads only; never changes lock state. */
    LockInfo status(String name);

    /** Every name this space knows of that is held, or was used and left a trace, sorted by name. */
    List<LockInfo> list();

    /**
     * Removes the lock on {@code name} only if it is still held by {@code ownerId}, the exact
     * owner that was seen (as printed by {@code status}). Only where {@link #capabilities()} has
     * {@link Capability#BREAK} (lease-based backends).
     *
     * @return true if that owner's lock was removed, false if it no longer held the name
     * @throws UnsupportedOperationException without {@link Capability#BREAK} (kernel locks, which free only when their holder exits)
     */
    boolean breakLock(String name, String ownerId);

    /** Releases open leases and stops background threads. Idempotent. */
    @Override
    void close();
}
