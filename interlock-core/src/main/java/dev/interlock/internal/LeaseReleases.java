package dev.interlock.internal;

import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The releases of one {@link DefaultLease} other than a plain {@link DefaultLease#close()}: after a
 * loss (at once, or at the deadline of a lease lost at its loss point, or when its holder closes
 * it), and after a hold-at-least time. Owner-checked and best effort after a loss, as the lease
 * rule asks ({@link DefaultLease}'s class comment); the loss itself is the lease's.
 */
final class LeaseReleases {
    private static final Log log = Log.of(DefaultLease.class);

    private final DefaultLease lease;
    /** The release at the deadline of a lease lost at its loss point; null until then. */
    private volatile ScheduledFuture<?> endTask;
    /** close() was called on the lost lease: its holder has stopped. */
    private volatile boolean holderClosed;
    /** The grant was released (or given up to its expiry) after a loss: a loss is released once. */
    private final AtomicBoolean releasedAfterLoss = new AtomicBoolean();

    LeaseReleases(DefaultLease lease) {
        this.lease = lease;
    }

    /**
     * Timer: queues the release of a lease lost at its loss point for its deadline, not before.
     * If the space is closing, nothing is released: the backend lets the lease run out.
     */
    void releaseAtTheEnd() {
        long wait = lease.deadlineNanos() - lease.space.ticker.read();
        endTask = lease.space.schedule(this::endDue, Math.max(wait, DefaultLease.MIN_STEP));
        if (holderClosed) {
            lease.space.execute(this::closeLost); // the holder closed it meanwhile; never a backend call on the timer
        }
    }

    private void endDue() {
        lease.space.execute(this::releaseAfterLoss);
    }

    void releaseAfterLoss() {
        if (!releasedAfterLoss.compareAndSet(false, true)) {
            return;
        }
        lease.io.lock();
        try {
            logRelease("lost ", lease.grant.releaseIfOwned());
        } catch (RuntimeException e) {
            log.debug("{} - releasing lost '{}' failed: {}", lease.backendName, lease.spec.name(), e.toString());
        } finally {
            lease.io.unlock();
        }
    }

    /**
     * Says what an owner-checked release did: it freed the lock, or changed nothing because the
     * lock was no longer this owner's (a lost lease, whose lock may now be someone else's).
     */
    void logRelease(String what, boolean freed) {
        if (freed) {
            log.debug("{} - released {}'{}'", lease.backendName, what, lease.spec.name());
        } else {
            log.debug(
                    "{} - nothing to release: {}'{}' (token {}) was no longer held by this owner (its lease had run out,"
                            + " or it had passed to another holder)",
                    lease.backendName,
                    what,
                    lease.spec.name(),
                    lease.grant.token());
        }
    }

    /**
     * close() before the hold-at-least time. A lease is renewed one last time to end exactly then,
     * so the lock outlives this process too, and this process releases it then as well: a backend
     * whose others judge a lease from when they first see its renewal ({@code dir:}) would keep it
     * up to one more lease for someone who looks only after that time. If the space closes first,
     * the lease is left to run out. A lock that does not expire is released by the space at that
     * time, or when the space closes, whichever is first.
     */
    void keepUntilHeldLongEnough(long keepNanos) {
        if (!lease.leaseBased) {
            lease.space.releaseLater(lease::releaseNow, keepNanos, true);
            log.debug(
                    "{} - '{}' closed, kept {}ms more (hold at least)",
                    lease.backendName,
                    lease.spec.name(),
                    TimeUnit.NANOSECONDS.toMillis(keepNanos));
            return;
        }
        Duration max = lease.grant.maxLease();
        long keep = max != null ? Math.min(keepNanos, max.toNanos()) : keepNanos; // dir: one lease at most
        lease.io.lock();
        try {
            lease.grant.renew(Duration.ofNanos(keep), keep);
        } catch (LockLostException e) {
            log.debug(
                    "{} - '{}' was already lost when closed: {}", lease.backendName, lease.spec.name(), e.getMessage());
            return;
        } catch (RuntimeException e) {
            throw new LockBackendException(
                    lease.backendName,
                    lease.spec.name(),
                    lease.backendName + " - could not keep " + LockNames.quote(lease.spec.name())
                            + " for " + TimeUnit.NANOSECONDS.toMillis(keepNanos) + "ms more (hold at least): "
                            + e.getMessage()
                            + "; it frees when its lease runs out",
                    e);
        } finally {
            lease.io.unlock();
        }
        lease.space.releaseLater(lease::releaseNow, keep, false);
        log.debug(
                "{} - '{}' closed, its lease now ends in {}ms (hold at least)",
                lease.backendName,
                lease.spec.name(),
                TimeUnit.NANOSECONDS.toMillis(keep));
    }

    /**
     * close() of a lost lease: the holder has stopped, so a lease kept until its end (lost at its
     * loss point) is released now, or at its hold-at-least time if that comes first. Owner-checked
     * and best effort, like every release after a loss; later calls do nothing.
     */
    void closeLost() {
        holderClosed = true;
        if (releasedAfterLoss.get()) {
            return; // released at the loss already, or being released
        }
        // The end's task may not be set yet (the loss is being declared on another thread): the
        // holder has stopped all the same, and a release left to it could find the space closed.
        ScheduledFuture<?> end = endTask;
        long now = lease.space.ticker.read();
        long until = lease.holdUntil;
        if (until != Long.MIN_VALUE && until - now > 0) {
            // Kept until then; without the end's task yet, releaseAtTheEnd calls this again once it is set.
            if (end != null && until - lease.deadlineNanos() < 0 && end.cancel(false)) {
                endTask = lease.space.schedule(this::endDue, until - now);
            }
            return;
        }
        if (end != null) {
            end.cancel(false);
        }
        releaseAfterLoss(); // once, whoever comes first; says what it did
    }

    /** Releases the grant (from the space, when a hold-at-least time ran out or the space closes). */
    void releaseNow() {
        lease.io.lock();
        try {
            logRelease("", lease.grant.releaseIfOwned());
        } catch (RuntimeException e) {
            log.warn(
                    "{} - releasing '{}' after its hold-at-least time failed: {}",
                    lease.backendName,
                    lease.spec.name(),
                    e.getMessage());
        } finally {
            lease.io.unlock();
        }
    }
}
