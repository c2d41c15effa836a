package dev.interlock.jdbc;

import dev.interlock.LockLostException;
import dev.interlock.Mode;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.LockNames;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A granted {@code jdbc:} lock: renewal and release are owner-checked statements of the
 * {@link LockStore}. A renewal that finds the row no longer ours (taken over after expiry,
 * broken, deleted) throws {@link LockLostException}; one that cannot reach the database throws
 * {@link dev.interlock.LockBackendException}, and the core keeps the lease valid until its
 * deadline on the monotonic clock, which is never later than the database's own expiry.
 */
final class JdbcGrant implements Grant {
    private final JdbcLockBackend backend;
    private final String name;
    private final String key;
    private final Mode mode;
    private final String owner;
    private final long token;
    private final long epoch;
    private final Instant acquiredAt;

    JdbcGrant(
            JdbcLockBackend backend,
            String name,
            String key,
            Mode mode,
            String owner,
            LockStore.Granted granted,
            Instant acquiredAt) {
        this.backend = backend;
        this.name = name;
        this.key = key;
        this.mode = mode;
        this.owner = owner;
        this.token = granted.token();
        this.epoch = granted.epoch();
        this.acquiredAt = acquiredAt;
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public Instant acquiredAt() {
        return acquiredAt;
    }

    @Override
    public void renew(Duration lease) {
        Optional<LockStore.Lost> lost = backend.store.renew(name, mode, owner, token, epoch, lease);
        if (lost.isPresent()) {
            throw new LockLostException(
                    backend.description(),
                    name,
                    backend.description() + " - lost " + LockNames.quote(name) + " (token " + token + "): "
                            + lost.get().why(),
                    null);
        }
    }

    @Override
    public void release() {
        releaseIfOwned();
    }

    @Override
    public boolean releaseIfOwned() {
        try {
            return backend.store.release(name, mode, owner, epoch);
        } finally {
            backend.signals.bump(key); // waiters of this process try at once
        }
    }
}
