package dev.interlock.testkit;

import dev.interlock.Lease;

/**
 * What a backend's contract test can do to its backend, so that lease loss, renewal failure and
 * fencing are tested on every backend ({@link LockSpaceContract#hooks()}). Each hook returns false
 * where the backend cannot do it, and the tests that need it are skipped there.
 */
public interface BackendHooks {
    /** A backend that offers none of the hooks. */
    BackendHooks NONE = new BackendHooks() {};

    /**
     * Cuts this test's spaces off from the backend, keeping its state (an unreachable server, a
     * file system that fails every call): renewals and new acquisitions fail with a transient
     * {@link dev.interlock.LockBackendException}.
     */
    default boolean cut() {
        return false;
    }

    /** Undoes {@link #cut()}. */
    default void restore() {}

    /**
     * Takes {@code lease}'s lock away from under it as the backend itself would when another host
     * reclaims it (the row or key deleted, the lock file replaced), without telling the lease.
     */
    default boolean takeAway(Lease lease) {
        return false;
    }

    /**
     * Makes the backend learn by itself that {@code lease}'s lock is gone and push that through
     * the SPI's loss channel (a keyspace event, a session that expired).
     */
    default boolean pushLoss(Lease lease) {
        return false;
    }
}
