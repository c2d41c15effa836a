package dev.interlock.internal;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.ProcessIdentity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

final class DefaultLockRequest implements LockRequest {
    private final DefaultLockSpace space;
    private final String name;
    private Mode mode = Mode.EXCLUSIVE;
    private int limit; // 0: a plain lock
    private Duration lease;
    private boolean fixed;
    private Duration holdAtLeast;
    private long ownerPid;
    private long ownerStart;
    private final List<Consumer<LockLostException>> listeners = new ArrayList<>();

    DefaultLockRequest(DefaultLockSpace space, String name) {
        this.space = space;
        this.name = name;
    }

    @Override
    public LockRequest mode(Mode mode) {
        this.mode = Objects.requireNonNull(mode, "mode");
        return this;
    }

    @Override
    public LockRequest limit(int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException(space.description + " - " + LockNames.quote(name)
                    + ": a semaphore limit must be from 1 to " + MAX_LIMIT + ", was " + limit);
        }
        this.limit = limit;
        return this;
    }

    @Override
    public LockRequest lease(Duration lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, was " + lease);
        }
        this.lease = lease; // how short it may be depends on fixedLease() and the backend: checked in run()
        return this;
    }

    /**
     * Holds the lock on behalf of another process of this host, {@code pid} (see
     * {@link Leases#onBehalfOf}): backends that judge a holder dead by its process judge it by
     * that one (and the process group it leads) instead of this JVM.
     */
    void onBehalfOf(long pid, long startTicks) {
        if (pid <= 0) {
            throw new IllegalArgumentException("pid must be positive, was " + pid);
        }
        this.ownerPid = pid;
        this.ownerStart = startTicks;
    }

    @Override
    public LockRequest fixedLease() {
        this.fixed = true;
        return this;
    }

    @Override
    public LockRequest holdAtLeast(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("hold-at-least must not be negative, was " + duration);
        }
        this.holdAtLeast = duration.isZero() ? null : duration;
        return this;
    }

    @Override
    public LockRequest onLost(Consumer<LockLostException> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    @Override
    public Optional<Lease> tryAcquire() {
        try {
            return Optional.ofNullable(run(0, true)); // busy is an answer: no exception is made for it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("unreachable: a try never waits", e);
        }
    }

    @Override
    public Lease acquire(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
        }
        return run(saturatedNanos(timeout), false);
    }

    @Override
    public Lease acquire() throws InterruptedException {
        return run(-1, false);
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * @param timeoutNanos 0: one try; &gt;0: wait up to it; &lt;0: forever
     * @param busyIsNull return null rather than throw when busy after the time given
     * @throws LockTimeoutException when busy after the time given, with who blocked the last try
     * @throws LockBackendException when the backend fails: at once for a single try or a failure
     *     that retrying cannot mend; a waiting acquire rides out transient failures
     *     ({@link WaitFaults}) and throws only if the wait runs out while they last
     */
    private Lease run(long timeoutNanos, boolean busyIsNull) throws InterruptedException {
        space.checkOpen();
        if (timeoutNanos != 0 && Thread.interrupted()) {
            // As java.util.concurrent does: an interrupted thread does not acquire, even a free lock.
            throw new InterruptedException(
                    space.description + " - interrupted before acquiring " + LockNames.quote(name));
        }
        Duration leaseDuration = lease != null ? lease : space.defaultLease;
        checkLease(leaseDuration);
        checkLimit();
        long start = space.ticker.read();
        boolean contended = false;
        WaitFaults faults = new WaitFaults(space, name);
        String gaveBack = null; // why the last grant, come too late, was given back
        while (true) {
            // A fresh acquisition (owner, loss channel) for each round: a grant given back was the last one's.
            Owner owner =
                    ownerPid > 0 ? ProcessIdentity.current().newOwner(ownerPid, ownerStart) : Owner.newAcquisition();
            LeaseLossChannel channel = new LeaseLossChannel();
            AcquireSpec spec = AcquireSpec.builder(name, mode, owner)
                    .lease(leaseDuration)
                    .limit(limit)
                    .lossChannel(channel)
                    .waits(timeoutNanos != 0)
                    .waitNanos(timeoutNanos > 0 ? Math.max(0, remaining(timeoutNanos, start)) : Long.MAX_VALUE)
                    .build();
            try (Attempt attempt = space.backend.attempt(spec)) {
                while (true) {
                    long tryStart = space.ticker.read();
                    Optional<Grant> grant;
                    try {
                        grant = attempt.tryAcquire();
                    } catch (LockBackendException e) {
                        long remaining = remaining(timeoutNanos, start);
                        if (!e.isTransient() || timeoutNanos == 0) {
                            throw e;
                        }
                        if (remaining <= 0) {
                            throw faults.gaveUp(e, space.ticker.read() - start, tryStart);
                        }
                        faults.failed(e);
                        faults.pause(remaining);
                        continue;
                    }
                    faults.answered();
                    if (grant.isPresent()) {
                        // A grant made before this try (handed over by a release) counts from then.
                        long leaseStart = tryStart - Math.max(0, grant.get().leaseAgeNanos());
                        long age = space.ticker.read() - leaseStart;
                        if (!LateGrants.tooLate(space, grant.get(), leaseDuration, fixed, age)) {
                            if (space.metered) {
                                space.acquiredMetric(name, mode, tryStart - start, contended);
                            }
                            return DefaultLease.start(
                                    space, spec, grant.get(), leaseStart, fixed, holdAtLeast, listeners, channel);
                        }
                        gaveBack = LateGrants.giveBack(space, spec, grant.get(), leaseDuration, age);
                        break;
                    }
                    contended = true;
                    long remaining = remaining(timeoutNanos, start);
                    if (remaining <= 0) {
                        return busy(timeoutNanos, start, busyIsNull, attempt, gaveBack);
                    }
                    checkInterrupt();
                    attempt.await(remaining);
                }
            }
            contended = true;
            long remaining = remaining(timeoutNanos, start);
            if (remaining <= 0) {
                return busy(timeoutNanos, start, busyIsNull, null, gaveBack);
            }
            checkInterrupt();
            faults.pause(
                    remaining); // a backend that answers that late is in trouble: no tight loop of grants given back
        }
    }

    /** The shortest lease renewed in the background: a renewal every third of it, at most every 33ms. */
    static final Duration MIN_RENEWED_LEASE = Duration.ofMillis(100);

    /**
     * A fixed lease may be as short as a millisecond (backends keep leases in whole milliseconds);
     * a renewed one at least {@link #MIN_RENEWED_LEASE}; kernel locks ignore the lease.
     */
    private void checkLease(Duration leaseDuration) {
        if (space.leaseKind == LeaseKind.NONE) {
            return;
        }
        if (fixed ? leaseDuration.toMillis() < 1 : leaseDuration.compareTo(MIN_RENEWED_LEASE) < 0) {
            throw new IllegalArgumentException(
                    space.description + " - a lease " + (fixed ? "" : "renewed in the background ")
                            + "must be at least " + (fixed ? "1ms" : MIN_RENEWED_LEASE.toMillis() + "ms") + ", was "
                            + (leaseDuration.toMillis() < 1
                                    ? leaseDuration.toNanos() / 1000 + "µs"
                                    : leaseDuration.toMillis() + "ms")
                            + (fixed ? "" : "; a shorter one works as a fixed lease (fixedLease())"));
        }
    }

    /**
     * A limit goes only to a backend that declares semaphores, and only with the exclusive mode:
     * a permit is one holder's, and a shared permit would mean nothing (docs/semaphores.md).
     */
    private void checkLimit() {
        if (limit == 0) {
            return;
        }
        if (!space.capabilities.contains(Capability.SEMAPHORE)) {
            throw new UnsupportedOperationException(
                    space.description + " - " + LockNames.quote(name) + ": semaphores are not supported by "
                            + space.description + " yet (docs/semaphores.md lists the backends that have them)");
        }
        if (mode != Mode.EXCLUSIVE) {
            throw new IllegalArgumentException(
                    space.description + " - " + LockNames.quote(name) + ": a semaphore permit cannot be shared;"
                            + " drop shared() (each of the " + limit + " permits has one holder)");
        }
    }

    /** What is left of the wait: {@link Long#MAX_VALUE} for a wait without end. */
    private long remaining(long timeoutNanos, long start) {
        return timeoutNanos < 0 ? Long.MAX_VALUE : timeoutNanos - (space.ticker.read() - start);
    }

    private void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    space.description + " - interrupted while waiting for " + LockNames.quote(name));
        }
    }

    /**
     * The end of a wait that ran out (or a single try that found the lock busy): counted, then
     * null if {@code busyIsNull}, else thrown with who blocked the last try. Who blocked is asked
     * only to build the exception: a busy single try, which ShedLock and Spring make in a loop,
     * builds none.
     *
     * @param attempt the attempt whose last try was refused, or null if the last grant was given back
     */
    private Lease busy(long timeoutNanos, long start, boolean busyIsNull, Attempt attempt, String gaveBack) {
        long waited = space.ticker.read() - start;
        if (space.metered) {
            space.timedOutMetric(name, mode, waited, timeoutNanos == 0);
        }
        if (busyIsNull) {
            return null;
        }
        List<HolderInfo> blockers = attempt != null ? attempt.blockers() : List.of();
        LockTimeoutException e = timeout(waited, timeoutNanos == 0, blockers);
        if (gaveBack == null) {
            throw e;
        }
        throw new LockTimeoutException(space.description, name, e.waited(), e.getMessage() + "; " + gaveBack, blockers);
    }

    private LockTimeoutException timeout(long waitedNanos, boolean once, List<HolderInfo> blockers) {
        long ms = TimeUnit.NANOSECONDS.toMillis(waitedNanos);
        String what = space.description + " - " + LockNames.quote(name) + " ("
                + (limit > 0 ? "a permit of " + limit : mode.shortName()) + ") ";
        return new LockTimeoutException(
                space.description,
                name,
                Duration.ofNanos(waitedNanos),
                what + (once ? "is busy" : "not acquired after " + ms + "ms") + " ("
                        + DefaultLockSpace.describe(blockers) + ")",
                blockers);
    }
}
