package dev.interlock.internal;

import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
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
    public LockRequest lease(Duration lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, was " + lease);
        }
        if (lease.toMillis() < 100) {
            throw new IllegalArgumentException("lease must be at least 100ms, was " + lease.toMillis() + "ms");
        }
        this.lease = lease;
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
     */
    private Lease run(long timeoutNanos, boolean busyIsNull) throws InterruptedException {
        space.checkOpen();
        Duration leaseDuration = lease != null ? lease : space.defaultLease;
        Owner owner = ownerPid > 0 ? ProcessIdentity.current().newOwner(ownerPid, ownerStart) : Owner.newAcquisition();
        DefaultLease.Channel channel = new DefaultLease.Channel();
        AcquireSpec spec = AcquireSpec.builder(name, mode, owner).lease(leaseDuration).lossChannel(channel)
                .waits(timeoutNanos != 0).build();
        long start = space.ticker.read();
        boolean contended = false;
        try (Attempt attempt = space.backend.attempt(spec)) {
            while (true) {
                long tryStart = space.ticker.read();
                Optional<Grant> grant = attempt.tryAcquire();
                if (grant.isPresent()) {
                    if (space.metered) {
                        space.acquiredMetric(name, mode, tryStart - start, contended);
                    }
                    // A grant made before this try (handed over by a release) counts from then.
                    long leaseStart = tryStart - Math.max(0, grant.get().leaseAgeNanos());
                    return DefaultLease.start(space, spec, grant.get(), leaseStart, fixed, holdAtLeast, listeners, channel);
                }
                contended = true;
                long waited = space.ticker.read() - start;
                long remaining = timeoutNanos < 0 ? Long.MAX_VALUE : timeoutNanos - waited;
                if (remaining <= 0) {
                    if (space.metered) {
                        space.timedOutMetric(name, mode, waited, timeoutNanos == 0);
                    }
                    if (busyIsNull) {
                        return null;
                    }
                    throw timeout(waited, timeoutNanos == 0, attempt.blockers());
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException(space.description + " - interrupted while waiting for "
                            + LockNames.quote(name));
                }
                attempt.await(remaining);
            }
        }
    }

    private LockTimeoutException timeout(long waitedNanos, boolean once, List<dev.interlock.HolderInfo> blockers) {
        long ms = TimeUnit.NANOSECONDS.toMillis(waitedNanos);
        String what = space.description + " - " + LockNames.quote(name) + " (" + mode.shortName() + ") ";
        return new LockTimeoutException(space.description, name, Duration.ofNanos(waitedNanos),
                what + (once ? "is busy" : "not acquired after " + ms + "ms")
                        + " (" + DefaultLockSpace.describe(blockers) + ")", blockers);
    }
}
