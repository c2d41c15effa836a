package dev.interlock.internal;

import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * A lease and its watchdog, built so that a slow or hung backend can never make a holder believe
 * it still holds a lock that others may take.
 *
 * <p><b>Three kinds of work, three places.</b> The space's <em>timer</em> only decides when
 * things are due (a renewal, the loss point) and never calls the backend, so it is never blocked
 * by one. Backend calls (renew, release, the check of a kernel lock) run on the space's
 * <em>executor</em>, one at a time per lease (a lock serialises them, as the SPI promises
 * backends), with the deadline of the call passed along. Loss listeners run on the executor too,
 * never on the timer. The timing and the background calls are {@link LeaseRenewals}', the
 * releases after a loss or a hold-at-least time {@link LeaseReleases}'; a loss listener runs once
 * ({@link LossListener}); a loss the backend reports arrives through {@link LeaseLossChannel}.
 *
 * <p><b>State</b> is an atomic reference (HELD, CLOSED, LOST) and a volatile deadline, so
 * {@link #isValid()} and {@link #validUntil()} answer at once whatever the backend is doing.
 *
 * <p><b>Lease-based grants:</b> the deadline is measured on the monotonic ticker from the moment
 * just before the request that granted (or renewed) it, so it is never later than the backend's
 * own expiry. A renewal is due every third of the lease; when renewals fail, or one has not
 * answered (or the lease is fixed), and less than a fifth of the lease remains, the lease is
 * lost: its <em>loss point</em>.
 *
 * <p><b>The lease rule</b> ({@link Lease}): a lease lost at its loss point is released at its
 * deadline by the timer ({@link LeaseReleases#releaseAtTheEnd}), or earlier by {@link #close()};
 * the release at the end also undoes a renewal that succeeded late. A loss the backend found is released at
 * once. {@link #isValid()}, {@link #close()} and renewals compare the ticker with the loss point
 * themselves, so a pause that kept the timer from running changes nothing.
 *
 * <p><b>Kernel grants</b> do not expire; the space's sweep has them checked every
 * {@code interlock.checkIntervalMs} (10s) for a removed or replaced lock file.
 */
final class DefaultLease implements Lease {
    private static final Log log = Log.of(DefaultLease.class);

    private enum State {
        HELD,
        CLOSED,
        LOST
    }

    static final long MIN_STEP = TimeUnit.MILLISECONDS.toNanos(1);

    final DefaultLockSpace space;
    final AcquireSpec spec;
    final Grant grant;
    final boolean leaseBased;
    private final boolean fixed;
    final String backendName;
    private final List<LossListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.HELD);
    /** Serialises backend calls on the grant; never taken by the timer or by the cheap getters. */
    final ReentrantLock io = new ReentrantLock();
    /** Background renewals (renewed leases) and checks (kernel locks). */
    private final LeaseRenewals renewals = new LeaseRenewals(this);
    /** The releases after a loss and after a hold-at-least time. */
    private final LeaseReleases releases = new LeaseReleases(this);

    volatile long leaseNanos;
    private volatile long deadline; // ticker nanos; Long.MAX_VALUE when it does not expire
    /** For a session lease, the last expiry passed on ({@link #sessionDeadline}); Long.MAX_VALUE: none yet. */
    private volatile long sessionExpiry = Long.MAX_VALUE;

    private volatile long sessionMargin;
    private final Object sessionLock = new Object();
    private final AtomicReference<LockLostException> lostCause = new AtomicReference<>();
    /** Ticker time of the grant: the start of the hold time of metrics. */
    private final long grantedAt;
    /**
     * Ticker time before which close() keeps the lock (hold at least); Long.MIN_VALUE: none.
     * Volatile: an adapter may move it while the lock is held ({@link #holdAtLeastFromNow}).
     */
    volatile long holdUntil;

    private DefaultLease(
            DefaultLockSpace space,
            AcquireSpec spec,
            Grant grant,
            long grantedAt,
            boolean fixed,
            Duration holdAtLeast) {
        this.space = space;
        this.spec = spec;
        this.grant = grant;
        this.leaseBased = space.leaseKind(grant) == LeaseKind.RENEWED;
        this.fixed = fixed;
        this.grantedAt = grantedAt;
        this.holdUntil = holdAtLeast == null ? Long.MIN_VALUE : grantedAt + holdAtLeast.toNanos();
        this.backendName = space.description;
        this.leaseNanos = spec.lease().toNanos();
        this.deadline = leaseBased ? grantedAt + leaseNanos : Long.MAX_VALUE;
    }

    static DefaultLease start(
            DefaultLockSpace space,
            AcquireSpec spec,
            Grant grant,
            long grantedAt,
            boolean fixed,
            Duration holdAtLeast,
            List<Consumer<LockLostException>> listeners,
            LeaseLossChannel channel) {
        // A kernel or server lock is no Java synchronization action: fence so that writes made by the
        // previous holder in this JVM before its release are visible to this holder.
        VarHandle.fullFence();
        DefaultLease l = new DefaultLease(space, spec, grant, grantedAt, fixed, holdAtLeast);
        for (Consumer<LockLostException> c : listeners) {
            l.listeners.add(l.listener(c));
        }
        space.opened(l);
        if (l.leaseBased) {
            if (!fixed) {
                l.renewals.schedule(l.leaseNanos / 3);
            }
            l.renewals.scheduleLossCheck();
        } else {
            // Kernel locks are checked by one periodic sweep of the space, not a task per lease:
            // scheduling and cancelling a task per acquisition would cost more than the lock itself.
            space.ensureKernelSweep();
        }
        if (log.isDebugEnabled()) {
            log.debug(
                    "{} - acquired '{}' {} token {} owner {}",
                    l.backendName,
                    spec.name(),
                    spec.mode().shortName(),
                    grant.token(),
                    spec.owner().id());
        }
        channel.attach(l);
        return l;
    }

    private long margin() {
        return leaseNanos / 5;
    }

    /** The loss point: a fifth of the lease before the deadline. */
    long lossPoint() {
        return deadline - margin();
    }

    boolean held() {
        return state.get() == State.HELD;
    }

    // ---------------------------------------------------------------- the loss point (the timer's side is
    // LeaseRenewals)

    /** True if this lease expires and its loss point has come on the ticker. */
    private boolean pastLossPoint(long now) {
        return leaseBased && now - lossPoint() >= 0;
    }

    /** Declares the loss of a lease whose loss point has come (see the class comment). */
    LockLostException loseAtLossPoint(long now) {
        long left = TimeUnit.NANOSECONDS.toMillis(Math.max(0, deadline - now));
        String end =
                left > 0 ? "; nobody else can take the lock for " + left + "ms more, unless this holder closes it" : "";
        if (fixed) {
            return lose(
                    "the fixed lease of " + TimeUnit.NANOSECONDS.toMillis(leaseNanos) + "ms ran out" + end, null, true);
        }
        Throwable last = renewals.lastFailure();
        // Found at or past the deadline, a fifth of the lease after the loss point that the timer
        // was set for: this process did not run meanwhile (stopped, starved), and a renewal it had
        // queued never had the chance to answer.
        boolean paused = now - deadline >= 0;
        String why = renewals.running() && last == null && !paused
                ? "renewal did not answer in time"
                : last == null
                        ? "the lease was not renewed in time (was this process paused?)"
                        : "renewal kept failing";
        String when = paused
                ? " and the lease ran out " + TimeUnit.NANOSECONDS.toMillis(now - deadline) + "ms ago"
                : " and the lease would run out in " + left + "ms";
        return lose(why + when + end, last, true);
    }

    // ---------------------------------------------------------------- backend calls (on the executor, or the caller's
    // renew)

    /**
     * One renewal on the calling thread, which holds {@link #io}: extends the deadline on success;
     * on {@link LockLostException} the lease is lost (and the exception rethrown).
     */
    void renewNow(long nanos) {
        long t = space.ticker.read();
        if (held() && pastLossPoint(t)) {
            // The timer has not run yet (a pause): the lease is lost all the same, and a renewal
            // now would hide that from the holder.
            throw loseAtLossPoint(t);
        }
        // The call should not outlast the loss point: after it, the timer has declared the loss anyway.
        long limit = leaseBased ? Math.max(MIN_STEP, lossPoint() - t) : DefaultLockSpace.KERNEL_LOCK_CHECK.toNanos();
        try {
            grant.renew(Duration.ofNanos(nanos), limit);
        } catch (LockLostException e) {
            throw lose(e.getMessage(), e);
        }
        if (!leaseBased) {
            return;
        }
        if (!held()) {
            return; // lost meanwhile: the release queued by the loss undoes this renewal
        }
        leaseNanos = nanos;
        deadline = t + nanos;
        renewals.scheduleLossCheck();
        renewals.tellRenewed(t + nanos);
    }

    /** A loss the backend found (the lock is gone or taken): released at once. */
    LockLostException lose(String why, Throwable cause) {
        return lose(why, cause, false);
    }

    /**
     * Marks the lease lost (once), stops its timers, tells the listeners on the notifier and
     * releases the lock on the executor, best effort (after any backend call in flight): at once,
     * or at the deadline if {@code keepUntilEnd} (a loss at the loss point, see the class comment).
     */
    private LockLostException lose(String why, Throwable cause, boolean keepUntilEnd) {
        LockLostException e = cause instanceof LockLostException && why.equals(cause.getMessage())
                ? (LockLostException) cause
                : new LockLostException(
                        backendName,
                        spec.name(),
                        backendName + " - lost " + LockNames.quote(spec.name()) + " (token " + grant.token() + "): "
                                + why,
                        cause);
        // The cause is published before the state, so whoever sees LOST finds it.
        if (!lostCause.compareAndSet(null, e)) {
            return lostCause.get();
        }
        if (!state.compareAndSet(State.HELD, State.LOST)) {
            return e; // closed meanwhile: nothing is held any more
        }
        cancelTimers();
        space.ended(this);
        if (space.metered) {
            space.lostMetric(spec.name(), spec.mode(), space.ticker.read() - grantedAt);
        }
        if (listeners.isEmpty()) {
            log.warn("{}", e.getMessage());
        } else {
            log.debug("{}", e.getMessage());
        }
        // Listeners are told on the notifier, which backend calls never occupy; the release waits
        // for any call in flight, on the executor.
        if (!space.notify(() -> tellListeners(e))) {
            tellListeners(e);
        }
        if (keepUntilEnd) {
            releases.releaseAtTheEnd();
        } else {
            space.execute(releases::releaseAfterLoss);
        }
        return e;
    }

    private LossListener listener(Consumer<LockLostException> listener) {
        return new LossListener(listener, backendName, spec.name());
    }

    private void tellListeners(LockLostException e) {
        for (LossListener l : listeners) {
            l.fire(e);
        }
    }

    private void cancelTimers() {
        renewals.cancel();
    }

    // ---------------------------------------------------------------- the Lease API

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
    public Instant validUntil() {
        long d = deadline;
        if (d == Long.MAX_VALUE) {
            return Instant.MAX;
        }
        return space.clock.instant().plusNanos(d - space.ticker.read());
    }

    @Override
    public boolean isValid() {
        return held() && !pastLossPoint(space.ticker.read());
    }

    @Override
    public void renew() {
        renewFor(leaseNanos);
    }

    @Override
    public void renew(Duration lease) {
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, was " + lease);
        }
        Duration max = grant.maxLease();
        if (max != null && lease.compareTo(max) > 0) {
            throw new IllegalArgumentException(
                    backendName + " - the lease of " + LockNames.quote(spec.name()) + " cannot be"
                            + " lengthened beyond the " + max.toMillis()
                            + "ms it was acquired with on this backend (others judge it by"
                            + " that); asked for " + lease.toMillis() + "ms");
        }
        renewFor(lease.toNanos());
    }

    private void renewFor(long nanos) {
        checkUsable();
        LockLostException lost = null;
        io.lock();
        try {
            if (state.get() == State.LOST) {
                lost = lostCause.get();
            } else {
                checkUsable();
                renewNow(nanos);
            }
        } catch (LockLostException e) {
            lost = e;
        } catch (RuntimeException e) {
            if (space.metered && !(e instanceof IllegalStateException)) {
                space.renewFailedMetric(spec.name(), spec.mode(), e);
            }
            throw e;
        } finally {
            io.unlock();
        }
        if (lost != null) {
            // The caller learns of the loss after its listeners did (each runs once), outside the
            // lock, since a listener may itself call into this lease.
            tellListeners(lost);
            throw lost;
        }
        if (leaseBased && !fixed) {
            renewals.reschedule(nanos / 3);
        }
    }

    private void checkUsable() {
        State s = state.get();
        if (s == State.CLOSED) {
            throw new IllegalStateException(
                    backendName + " - lease on " + LockNames.quote(spec.name()) + " was closed");
        }
        if (s == State.LOST) {
            LockLostException e = lostCause.get();
            tellListeners(e); // as on every path that reports the loss: the listeners first
            throw e;
        }
    }

    @Override
    public Lease onLost(Consumer<LockLostException> listener) {
        LossListener once = listener(listener);
        listeners.add(once);
        if (state.get() == State.LOST) {
            // Lost before (or while) it was added: tell it here, on the calling thread.
            once.fire(lostCause.get());
        }
        return this;
    }

    @Override
    public void close() {
        if (held() && pastLossPoint(space.ticker.read())) {
            // Lost before it was closed, though the timer has not said so yet (a pause): the loss
            // is reported, once, before close() returns, and then released as the holder asks.
            tellListeners(loseAtLossPoint(space.ticker.read()));
        }
        if (!state.compareAndSet(State.HELD, State.CLOSED)) {
            if (state.get() == State.LOST) {
                releases.closeLost();
            }
            return;
        }
        cancelTimers();
        space.ended(this);
        VarHandle.fullFence();
        if (space.metered) {
            space.releasedMetric(spec.name(), spec.mode(), space.ticker.read() - grantedAt);
        }
        long until = holdUntil;
        long keep = until == Long.MIN_VALUE ? 0 : until - space.ticker.read();
        if (keep > 0) {
            releases.keepUntilHeldLongEnough(keep);
            return;
        }
        boolean freed;
        io.lock();
        try {
            freed = grant.releaseIfOwned();
        } catch (LockBackendException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockBackendException(
                    backendName,
                    spec.name(),
                    backendName + " - releasing " + LockNames.quote(spec.name()) + " failed: " + e.getMessage(),
                    e);
        } finally {
            io.unlock();
        }
        releases.logRelease("", freed);
    }

    /** Releases the grant (from the space, when a hold-at-least time ran out or the space closes). */
    void releaseNow() {
        releases.releaseNow();
    }

    // ---------------------------------------------------------------- internal hooks (Leases)

    Grant grant() {
        return grant;
    }

    /**
     * Tells {@code listener} the new deadline (ticker nanos) after every successful renewal, on the
     * renewing thread, and once now with the current one. It must not block.
     */
    void onRenewed(LongConsumer listener) {
        renewals.onRenewed(listener, leaseBased ? deadline : sessionExpiry);
    }

    /**
     * A {@link LeaseKind#SESSION} grant's backend reported when its session could end
     * ({@link dev.interlock.spi.LossChannel#sessionDeadline}): passed on to the renewal listeners
     * as if it were a renewal, but only when it moved by a quarter of the margin since it was last
     * passed on (a session answers many times per margin, and each pass re-arms a timer).
     */
    void sessionDeadline(long lossPointNanos, long expiryNanos) {
        if (leaseBased) {
            return; // a renewed lease has its own deadline
        }
        synchronized (sessionLock) {
            long margin = expiryNanos - lossPointNanos;
            if (sessionExpiry != Long.MAX_VALUE && expiryNanos - sessionExpiry < margin / 4) {
                return;
            }
            sessionMargin = margin;
            sessionExpiry = expiryNanos;
        }
        renewals.tellRenewed(expiryNanos);
    }

    /** The deadline on the space's ticker; {@link Long#MAX_VALUE} if it does not expire. */
    long deadlineNanos() {
        return deadline;
    }

    @Override
    public boolean holdAtLeastFromNow(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("hold-at-least must not be negative, was " + duration);
        }
        holdUntil = duration.isZero() ? Long.MIN_VALUE : space.ticker.read() + duration.toNanos();
        return true;
    }

    @Override
    public OptionalInt inheritableDescriptor() {
        return grant.inheritableDescriptor();
    }

    /** The lease duration now in force. */
    Duration leaseDuration() {
        return Duration.ofNanos(leaseNanos);
    }

    /** True if a backend session holds the grant ({@link LeaseKind#SESSION}). */
    boolean sessionHeld() {
        return space.leaseKind(grant) == LeaseKind.SESSION;
    }

    /** True if the grant expires unless renewed. */
    boolean leaseBased() {
        return leaseBased;
    }

    /** How long before its deadline a lease whose renewals fail (or whose session is silent) is declared lost. */
    long lossMarginNanos() {
        return leaseBased ? margin() : sessionMargin;
    }

    /** Space sweep of kernel leases: queue a check of the lock on the executor. */
    void watchdog() {
        renewals.check();
    }

    DefaultLockSpace space() {
        return space;
    }

    @Override
    public String toString() {
        return "Lease[" + spec.name() + " " + spec.mode().shortName() + " token=" + grant.token() + " owner="
                + spec.owner().id() + "]";
    }
}
