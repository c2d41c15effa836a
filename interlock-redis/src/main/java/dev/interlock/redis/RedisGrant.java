package dev.interlock.redis;

import dev.interlock.Mode;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A granted {@code redis:} lock. Renewal is compare-and-expire and release compare-and-delete on
 * this acquisition's owner and token, so neither can touch a grant made to someone else.
 */
final class RedisGrant implements Grant {
    private final RedisLockStore store;
    private final AcquireSpec spec;
    private final long token;
    private final Instant acquiredAt;

    private final RedisLockBackend backend;
    private final AutoCloseable told;

    /** How long before the try that returned it a handed-over lease began (see Grant#leaseAgeNanos). */
    private final long leaseAgeNanos;

    RedisGrant(RedisLockBackend backend, AcquireSpec spec, long token, Instant acquiredAt) {
        this(backend, spec, token, acquiredAt, 0);
    }

    RedisGrant(RedisLockBackend backend, AcquireSpec spec, long token, Instant acquiredAt, long leaseAgeNanos) {
        this.leaseAgeNanos = leaseAgeNanos;
        this.backend = backend;
        this.store = backend.store;
        this.spec = spec;
        this.token = token;
        this.acquiredAt = acquiredAt;
        this.told = backend.listenForLoss(spec);
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
    public long leaseAgeNanos() {
        return leaseAgeNanos;
    }

    @Override
    public void renew(Duration lease) {
        RedisLockStore.Renewed r = store.renew(spec.name(), spec.owner().id(), token, Math.max(1, lease.toMillis()));
        if (r.renewed()) {
            return;
        }
        String now;
        if (r.holders().isEmpty()) {
            now =
                    "the server no longer has it (its lease ran out there, it was broken, or the server lost its data) and the lock"
                            + " is free";
        } else {
            now = "the server no longer has it; the lock is now held "
                    + r.holders().stream()
                            .map(e -> e.mode().shortName() + " by " + e.ownerId()
                                    + e.token().stream()
                                            .mapToObj(t -> ", token " + t)
                                            .collect(Collectors.joining()))
                            .collect(Collectors.joining("; "));
        }
        throw backend.failures.lost(spec.name(), token, now, null);
    }

    @Override
    public void release() {
        releaseIfOwned();
    }

    @Override
    public boolean releaseIfOwned() {
        try {
            List<String> candidates = backend.handOffCandidates(spec.name());
            // Before the script: a waiter the release hands the lock to counts its lease from here.
            long sentAt = candidates.isEmpty() ? 0 : backend.ticker.read();
            RedisLockStore.Released r = store.release(spec.name(), spec.owner().id(), token, candidates);
            if (r.released() && spec.mode() == Mode.EXCLUSIVE && spec.limit() == 0) {
                backend.barging.released(spec.name(), Long.toString(token));
            } else if (r.fence() != null) {
                backend.barging.released(spec.name(), r.fence()); // a permit, with waiters it may pass
            }
            if (r.handedTo() != null) {
                backend.handed(spec.name(), r.handedTo(), r.handedToken(), sentAt);
            }
            return r.released();
        } finally {
            backend.stopListening(spec, told);
        }
    }
}
