package dev.interlock.internal;

import dev.interlock.LockLostException;
import dev.interlock.spi.support.Log;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

/**
 * The timing and background work of one {@link DefaultLease}: a renewed lease's renewals (due
 * every third of the lease, retried at half the time left before the loss point when they fail)
 * and its check at the loss point, and a kernel lock's periodic check. The space's timer only
 * says when something is due and never calls the backend; the backend call runs on the executor,
 * under the lease's {@code io} lock, one at a time. What a renewal's answer means, and the loss
 * itself, are the lease's ({@link DefaultLease#renewNow}, {@link DefaultLease#loseAtLossPoint}).
 */
final class LeaseRenewals {
    private static final Log log = Log.of(DefaultLease.class);

    private final DefaultLease lease;
    /** A background renewal or check is queued or running. */
    private final AtomicBoolean running = new AtomicBoolean();

    private volatile ScheduledFuture<?> task;
    private volatile ScheduledFuture<?> lossTask;
    /** Told the new deadline after every successful renewal ({@code interlock run}'s supervision). */
    private final List<LongConsumer> renewedListeners = new CopyOnWriteArrayList<>();
    /** Why the last background renewal failed; null after a success. */
    private volatile Throwable lastFailure;

    LeaseRenewals(DefaultLease lease) {
        this.lease = lease;
    }

    /** True while a background renewal is queued or running (one that has not answered yet). */
    boolean running() {
        return running.get();
    }

    Throwable lastFailure() {
        return lastFailure;
    }

    /** Adds a listener of renewals and tells it {@code deadline}, the current one. */
    void onRenewed(LongConsumer listener, long deadline) {
        renewedListeners.add(listener);
        listener.accept(deadline);
    }

    /** A renewal moved the deadline to {@code deadline}: tells the listeners, on the renewing thread. */
    void tellRenewed(long deadline) {
        for (LongConsumer r : renewedListeners) {
            try {
                r.accept(deadline);
            } catch (RuntimeException e) {
                log.error("{} - renewal listener of '{}' failed", lease.backendName, lease.spec.name(), e);
            }
        }
    }

    /** Timer: the next renewal in {@code delayNanos}. */
    void schedule(long delayNanos) {
        ScheduledFuture<?> f = lease.space.schedule(this::due, Math.max(delayNanos, DefaultLease.MIN_STEP));
        task = f;
        if (!lease.held() && f != null) {
            f.cancel(false);
        }
    }

    /** The holder renewed by itself: the next background renewal counts from now. */
    void reschedule(long delayNanos) {
        cancelRenewal();
        schedule(delayNanos);
    }

    /** Cancels the next renewal and the loss check (the lease ended). */
    void cancel() {
        cancelRenewal();
        ScheduledFuture<?> c = lossTask;
        if (c != null) {
            c.cancel(false);
        }
    }

    private void cancelRenewal() {
        ScheduledFuture<?> r = task;
        if (r != null) {
            r.cancel(false);
        }
    }

    /** Timer: a check at the loss point (again after every renewal, which moves it). */
    void scheduleLossCheck() {
        DefaultLockSpace space = lease.space;
        long delay = lease.lossPoint() - space.ticker.read();
        ScheduledFuture<?> f = space.schedule(this::lossDue, Math.max(delay, DefaultLease.MIN_STEP));
        ScheduledFuture<?> old = lossTask;
        lossTask = f;
        if (old != null) {
            old.cancel(false);
        }
        if (!lease.held() && f != null) {
            f.cancel(false);
        }
    }

    /** Timer: the loss point may have come. Declares the loss unless a renewal moved the deadline. */
    private void lossDue() {
        if (!lease.held()) {
            return;
        }
        long now = lease.space.ticker.read();
        if (now - lease.lossPoint() < 0) {
            scheduleLossCheck();
            return;
        }
        lease.loseAtLossPoint(now);
    }

    /** Timer: a renewal is due; hand it to the executor unless one is already queued or running. */
    private void due() {
        if (lease.held() && running.compareAndSet(false, true)) {
            if (!lease.space.execute(this::renewInBackground)) {
                running.set(false);
            }
        }
    }

    private void renewInBackground() {
        DefaultLockSpace space = lease.space;
        long started = space.ticker.read();
        try {
            if (!lease.held()) {
                return;
            }
            lease.io.lock();
            try {
                if (!lease.held()) {
                    return;
                }
                lease.renewNow(lease.leaseNanos);
            } finally {
                lease.io.unlock();
            }
            lastFailure = null;
            schedule(lease.leaseNanos / 3 - (space.ticker.read() - started));
        } catch (LockLostException e) {
            // renewNow declared the loss
        } catch (RuntimeException e) {
            lastFailure = e;
            if (space.metered) {
                space.renewFailedMetric(lease.spec.name(), lease.spec.mode(), e);
            }
            long left = lease.lossPoint() - space.ticker.read();
            if (lease.held() && left > DefaultLease.MIN_STEP) {
                log.warn(
                        "{} - renewing '{}' failed, will retry: {}",
                        lease.backendName,
                        lease.spec.name(),
                        e.getMessage());
                // Retry at half the time left before the loss point, at most every third of the lease.
                schedule(left <= 20 * DefaultLease.MIN_STEP ? left : Math.min(lease.leaseNanos / 3, left / 2));
            }
            // else: the loss point is due; the timer declares the loss
        } finally {
            running.set(false);
        }
    }

    /** Space sweep of kernel leases: queue a check of the lock on the executor. */
    void check() {
        if (!lease.leaseBased && lease.held() && running.compareAndSet(false, true)) {
            if (!lease.space.execute(this::verifyInBackground)) {
                running.set(false);
            }
        }
    }

    private void verifyInBackground() {
        try {
            if (!lease.held() || !lease.io.tryLock()) {
                return; // a caller's renew() or close() is talking to the backend: it checks as well
            }
            try {
                if (lease.held()) {
                    lease.renewNow(lease.leaseNanos);
                }
            } finally {
                lease.io.unlock();
            }
        } catch (LockLostException e) {
            // declared by renewNow
        } catch (RuntimeException e) {
            if (lease.space.metered) {
                lease.space.renewFailedMetric(lease.spec.name(), lease.spec.mode(), e);
            }
            log.warn("{} - checking '{}' failed, will retry: {}", lease.backendName, lease.spec.name(), e.getMessage());
        } finally {
            running.set(false);
        }
    }
}
