package dev.interlock.internal;

import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease and its watchdog.
 *
 * <p>Lease-based grants: the deadline is measured on the monotonic ticker from the moment just
 * before the request that granted (or renewed) it, so it is never later than the backend's own
 * expiry. The watchdog renews every third of the lease; when renewals fail and less than a fifth
 * of the lease remains, the lease is declared lost while the backend still holds it for us, so
 * the holder stops before anyone else can take the lock.
 *
 * <p>Kernel grants: the watchdog verifies every {@code interlock.checkIntervalMs} (10s) that the
 * lock is still ours (the lock file was not removed or replaced).
 */
final class DefaultLease implements Lease {
    private static final Logger log = LoggerFactory.getLogger(DefaultLease.class);

    private enum State { HELD, CLOSED, LOST }

    private static final long MIN_STEP = TimeUnit.MILLISECONDS.toNanos(1);

    private final DefaultLockSpace space;
    private final AcquireSpec spec;
    private final Grant grant;
    private final boolean leaseBased;
    private final boolean fixed;
    private final long leaseNanos;
    private final List<Consumer<LockLostException>> listeners = new CopyOnWriteArrayList<>();
    private final List<java.util.function.LongConsumer> renewed = new CopyOnWriteArrayList<>();

    private State state = State.HELD;
    private long deadline; // ticker nanos; Long.MAX_VALUE when it does not expire
    private LockLostException lostCause;
    private ScheduledFuture<?> next;

    private DefaultLease(DefaultLockSpace space, AcquireSpec spec, Grant grant, long grantedAt, boolean fixed) {
        this.space = space;
        this.spec = spec;
        this.grant = grant;
        this.leaseBased = space.backend.leaseBased();
        this.fixed = fixed;
        this.leaseNanos = spec.lease().toNanos();
        this.deadline = leaseBased ? grantedAt + leaseNanos : Long.MAX_VALUE;
    }

    static DefaultLease start(DefaultLockSpace space, AcquireSpec spec, Grant grant, long grantedAt, boolean fixed,
            List<Consumer<LockLostException>> listeners) {
        // A kernel or server lock is no Java synchronization action: fence so that writes made by the
        // previous holder in this JVM before its release are visible to this holder.
        java.lang.invoke.VarHandle.fullFence();
        DefaultLease l = new DefaultLease(space, spec, grant, grantedAt, fixed);
        l.listeners.addAll(listeners);
        space.opened(l);
        if (l.leaseBased) {
            synchronized (l) {
                l.schedule(fixed ? l.untilMargin() : l.leaseNanos / 3);
            }
        } else {
            // Kernel locks are checked by one periodic sweep of the space, not a task per lease:
            // scheduling and cancelling a task per acquisition would cost more than the lock itself.
            space.ensureKernelSweep();
        }
        if (log.isDebugEnabled()) {
            log.debug("{} - acquired '{}' {} token {} owner {}", space.backend.description(), spec.name(),
                    spec.mode().shortName(), grant.token(), spec.owner().id());
        }
        return l;
    }

    private long margin() {
        return leaseNanos / 5;
    }

    private long untilMargin() {
        return Math.max(0, deadline - margin() - space.ticker.read());
    }

    private void schedule(long delayNanos) {
        try {
            next = space.scheduler().schedule(this::watchdog, Math.max(delayNanos, MIN_STEP), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The space is closing; the lease is released by the close.
            next = null;
        }
    }

    /** Runs on the scheduler: renew (lease-based), expire (fixed lease) or verify (kernel locks, from the sweep). */
    void watchdog() {
        LockLostException lost = null;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            if (leaseBased && fixed) {
                if (untilMargin() <= MIN_STEP) {
                    lost = lose("the fixed lease of " + spec.lease().toMillis() + "ms ran out", null);
                } else {
                    schedule(untilMargin());
                }
            } else {
                try {
                    renewLocked();
                    if (leaseBased) {
                        schedule(leaseNanos / 3);
                    }
                } catch (LockLostException e) {
                    lost = lostCause;
                } catch (RuntimeException e) {
                    if (!leaseBased) {
                        log.warn("{} - checking '{}' failed, will retry: {}", space.backend.description(), spec.name(), e.toString());
                    } else {
                        long left = untilMargin();
                        if (left <= MIN_STEP) {
                            lost = lose("renewal kept failing and the lease would run out in "
                                    + TimeUnit.NANOSECONDS.toMillis(Math.max(0, deadline - space.ticker.read())) + "ms", e);
                        } else {
                            log.warn("{} - renewing '{}' failed, will retry: {}", space.backend.description(), spec.name(), e.toString());
                            // Retry at half the time left before the margin; the last retry lands on the margin itself.
                            schedule(left <= 20 * MIN_STEP ? left : Math.min(leaseNanos / 3, left / 2));
                        }
                    }
                }
            }
        }
        if (lost != null) {
            notifyLost(lost, false);
        }
    }

    /** Renews under the lock; on LockLostException the lease is already marked lost. */
    private void renewLocked() {
        long t = space.ticker.read();
        try {
            grant.renew(spec.lease());
        } catch (LockLostException e) {
            lose(e.getMessage(), e);
            throw lostCause;
        }
        if (leaseBased) {
            deadline = t + leaseNanos;
            for (java.util.function.LongConsumer r : renewed) {
                try {
                    r.accept(deadline);
                } catch (RuntimeException e) {
                    log.error("{} - renewal listener of '{}' failed", space.backend.description(), spec.name(), e);
                }
            }
        }
    }

    /**
     * Tells {@code listener} the new deadline (ticker nanos) after every successful renewal, on the
     * renewing thread, and once now with the current one. It must not block.
     */
    void onRenewed(java.util.function.LongConsumer listener) {
        long now;
        synchronized (this) {
            renewed.add(listener);
            now = deadline;
        }
        listener.accept(now);
    }

    /** The deadline on the space's ticker; {@link Long#MAX_VALUE} if it does not expire. */
    synchronized long deadlineNanos() {
        return deadline;
    }

    /** The lease duration asked for. */
    Duration leaseDuration() {
        return spec.lease();
    }

    /** True if the grant expires unless renewed. */
    boolean leaseBased() {
        return leaseBased;
    }

    /** How long before its deadline a lease whose renewals fail is declared lost. */
    long lossMarginNanos() {
        return margin();
    }

    DefaultLockSpace space() {
        return space;
    }

    /** Marks the lease lost (caller holds the monitor) and releases it best-effort. */
    private LockLostException lose(String why, Throwable cause) {
        state = State.LOST;
        lostCause = cause instanceof LockLostException && why.equals(cause.getMessage())
                ? (LockLostException) cause
                : new LockLostException(space.backend.description(), spec.name(),
                        space.backend.description() + " - lost " + LockNames.quote(spec.name()) + " (token " + grant.token() + "): " + why, cause);
        if (next != null) {
            next.cancel(false);
        }
        space.ended(this);
        try {
            grant.release();
        } catch (RuntimeException e) {
            log.debug("{} - releasing lost '{}' failed: {}", space.backend.description(), spec.name(), e.toString());
        }
        return lostCause;
    }

    /**
     * Tells the listeners. The loss is logged at WARN only when nobody else hears of it (no
     * listener, and not thrown to a caller of {@link #renew()}): never log and also report it.
     */
    private void notifyLost(LockLostException e, boolean thrownToCaller) {
        if (listeners.isEmpty() && !thrownToCaller) {
            log.warn("{}", e.getMessage());
        } else {
            log.debug("{}", e.getMessage());
        }
        for (Consumer<LockLostException> l : listeners) {
            try {
                l.accept(e);
            } catch (RuntimeException ex) {
                log.error("{} - lost-lock listener of '{}' failed", space.backend.description(), spec.name(), ex);
            }
        }
    }

    @Override
    public String name() {
        return spec.name();
    }

    @Override
    public Mode mode() {
        return spec.mode();
    }

    @Override
    public Owner owner() {
        return spec.owner();
    }

    @Override
    public long token() {
        return grant.token();
    }

    @Override
    public Instant acquiredAt() {
        return grant.acquiredAt();
    }

    @Override
    public synchronized Instant validUntil() {
        if (deadline == Long.MAX_VALUE) {
            return Instant.MAX;
        }
        return space.clock.instant().plusNanos(deadline - space.ticker.read());
    }

    @Override
    public synchronized boolean isValid() {
        return state == State.HELD && (deadline == Long.MAX_VALUE || space.ticker.read() - deadline < 0);
    }

    @Override
    public void renew() {
        LockLostException lost;
        synchronized (this) {
            if (state == State.CLOSED) {
                throw new IllegalStateException(space.backend.description() + " - lease on " + LockNames.quote(spec.name()) + " was closed");
            }
            if (state == State.LOST) {
                throw lostCause;
            }
            try {
                renewLocked();
                return;
            } catch (LockLostException e) {
                lost = e;
            }
        }
        notifyLost(lost, true);
        throw lost;
    }

    @Override
    public Lease onLost(Consumer<LockLostException> listener) {
        LockLostException already;
        synchronized (this) {
            already = state == State.LOST ? lostCause : null;
            if (already == null) {
                listeners.add(listener);
            }
        }
        if (already != null) {
            listener.accept(already);
        }
        return this;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            state = State.CLOSED;
            if (next != null) {
                next.cancel(false);
            }
            space.ended(this);
            java.lang.invoke.VarHandle.fullFence();
            try {
                grant.release();
            } catch (LockBackendException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new LockBackendException(space.backend.description(), spec.name(),
                        space.backend.description() + " - releasing " + LockNames.quote(spec.name()) + " failed: " + e.getMessage(), e);
            }
        }
        log.debug("{} - released '{}'", space.backend.description(), spec.name());
    }

    Grant grant() {
        return grant;
    }

    @Override
    public String toString() {
        return "Lease[" + spec.name() + " " + spec.mode().shortName() + " token=" + grant.token() + " owner=" + spec.owner().id() + "]";
    }
}
