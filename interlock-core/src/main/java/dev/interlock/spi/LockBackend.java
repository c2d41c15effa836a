package dev.interlock.spi;

import dev.interlock.Capability;
import dev.interlock.LockInfo;
import java.util.List;
import java.util.Set;

/**
 * A backend: the primitive operations the core builds every lock space on. The core validates
 * names, runs the wait loop with deadlines and interrupts, and runs renewal; a backend only
 * makes single, non-blocking state changes and knows how to wait for a change. See
 * {@code docs/spi.md} for a walk-through.
 *
 * <p>Implementations are thread-safe.
 */
public interface LockBackend extends AutoCloseable {
    /**
     * Short description for messages, such as {@code flock:/var/lock/app}; never contains a
     * password (build it from {@link BackendConfig#maskedUri()}).
     */
    String description();

    /**
     * How this backend's grants stay held, which sets the core's schedule for them (see
     * {@link LeaseKind}): {@link LeaseKind#RENEWED} for leases that expire unless renewed
     * ({@code dir:}, {@code jdbc:}, {@code redis:}, {@code mem:}), {@link LeaseKind#NONE} for
     * kernel locks held until released or until the process ends ({@code flock:}),
     * {@link LeaseKind#SESSION} for locks a backend session keeps. The one place a backend says
     * it; the core reads it before any grant (to check a request's lease, and for
     * {@code interlock run}).
     *
     * <p>The default answers from {@link #leaseBased()}, for backends written before this method.
     */
    @SuppressWarnings("deprecation")
    default LeaseKind leaseKind() {
        return leaseBased() ? LeaseKind.RENEWED : LeaseKind.NONE;
    }

    /**
     * True if grants die with this process unless renewed or kept by a session; false for kernel
     * locks a child process can inherit.
     *
     * @deprecated override {@link #leaseKind()}, which says the same and tells sessions from
     *     renewed leases. The core no longer calls this method except through the default of
     *     {@link #leaseKind()}; its own default, true, answers for the usual lease-based backend.
     */
    @Deprecated(since = "0.2.0")
    default boolean leaseBased() {
        return true;
    }

    /** What this backend offers beyond the common contract (default: nothing). */
    default Set<Capability> capabilities() {
        return Set.of();
    }

    /**
     * Starts one acquisition. The returned attempt is used by one thread and always closed. The
     * attempt may keep a place in a queue between tries (e.g. a waiting writer that keeps new
     * readers out); closing it gives that place up.
     */
    Attempt attempt(AcquireSpec spec);

    /** Current holders of {@code name}. Must not change lock state. */
    LockInfo inspect(String name);

    /** All names with a trace in this backend, sorted. */
    List<LockInfo> list();

    /**
     * Removes {@code name}'s lock if and only if it is held by {@code ownerId}. Called only if
     * {@link #capabilities()} has {@link Capability#BREAK}.
     *
     * @return true if that owner's lock was removed
     */
    default boolean breakLock(String name, String ownerId) {
        throw new UnsupportedOperationException(description() + " cannot break locks");
    }

    /** Frees resources (threads, descriptors, connections). Idempotent. */
    @Override
    void close();
}
