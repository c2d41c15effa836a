package dev.interlock.spi;

import dev.interlock.Mode;
import dev.interlock.Owner;
import java.time.Duration;
import java.util.Objects;

/**
 * One acquisition asked of a backend. The name has already been validated by the core.
 * Immutable; fields added in later versions come with defaults, so backends keep compiling.
 */
public final class AcquireSpec {
    /** A class, not a lambda: linking one costs a command-line start on JDK 17 (docs/benchmarks.md). */
    private static final LossChannel NOWHERE = new LossChannel() {
        @Override
        public void lost(String reason, Throwable cause) {}
    };

    private final String name;
    private final Mode mode;
    private final Owner owner;
    private final Duration lease;
    private final int permits;
    private final int limit;
    private final LossChannel lossChannel;
    private final boolean waits;
    private final long waitNanos;

    private AcquireSpec(Builder b) {
        this.name = Objects.requireNonNull(b.name, "name");
        this.mode = Objects.requireNonNull(b.mode, "mode");
        this.owner = Objects.requireNonNull(b.owner, "owner");
        this.lease = Objects.requireNonNull(b.lease, "lease");
        this.permits = b.permits;
        this.limit = b.limit;
        this.lossChannel = b.lossChannel;
        this.waits = b.waits;
        this.waitNanos = b.waitNanos;
    }

    /**
     * @deprecated use {@link #builder(String, Mode, Owner)}, which keeps working when fields are added
     */
    @Deprecated
    public AcquireSpec(String name, Mode mode, Owner owner, Duration lease) {
        this(builder(name, mode, owner).lease(lease));
    }

    public static Builder builder(String name, Mode mode, Owner owner) {
        return new Builder(name, mode, owner);
    }

    /** The lock name. */
    public String name() {
        return name;
    }

    /** Shared or exclusive. */
    public Mode mode() {
        return mode;
    }

    /** Unique to this acquisition; every renewal and release must check it. */
    public Owner owner() {
        return owner;
    }

    /** Lease duration for lease-based backends. */
    public Duration lease() {
        return lease;
    }

    /**
     * Permits asked for by this one acquisition: always 1 today (a semaphore acquisition takes one
     * of {@link #limit()} permits). Larger values are reserved for acquisitions that take several
     * permits at once (a later version); a backend must refuse anything but 1.
     */
    public int permits() {
        return permits;
    }

    /**
     * 0 for a plain lock; N &ge; 1 for one permit of a counting semaphore of N permits on this name
     * (at most N holders at once, each with its own lease and token). The core sends a limit only
     * to a backend that declares {@link dev.interlock.Capability#SEMAPHORE}, always with
     * {@link Mode#EXCLUSIVE}, and never above {@link dev.interlock.LockRequest#MAX_LIMIT}. The
     * backend checks, in the same atomic step that would grant, that the name's current holders
     * agree: a plain lock held while a permit is asked (or the reverse), or holders of another
     * limit, is refused with {@link dev.interlock.spi.support.BackendFailures#limitMismatch}.
     */
    public int limit() {
        return limit;
    }

    /**
     * Where the backend reports, at any time after granting, that the lock is gone without being
     * asked (a keyspace event, a session that ended, a connection that held the lock closed).
     * Never null.
     */
    public LossChannel lossChannel() {
        return lossChannel;
    }

    /**
     * True if the caller waits when the first try fails (an acquisition with a time limit above
     * zero, or none), false for a single try. A hint: a backend may queue the first try of a
     * waiting acquisition at once instead of trying unqueued first, and must still give the place
     * up when the attempt closes without a grant ({@link Attempt#close()}).
     */
    public boolean waits() {
        return waits;
    }

    /**
     * How long, from the moment this attempt is made, the caller goes on trying and waiting:
     * {@link Long#MAX_VALUE} when it waits without a limit, and for a single try (which waits for
     * nothing but its own call). A hint for a networked backend: a call that a paused server does
     * not answer should not hold the caller past its deadline, so such a backend may bound its
     * calls by the time left (at least a small floor) rather than only by its own call timeout.
     */
    public long waitNanos() {
        return waitNanos;
    }

    @Override
    public String toString() {
        return "AcquireSpec[" + name + " " + mode.shortName() + (limit > 0 ? " limit=" + limit : "") + " owner="
                + owner.id() + " lease=" + lease + "]";
    }

    /** Builds an {@link AcquireSpec}; the lease defaults to 30s, one permit, a plain lock (limit 0), no loss channel, a single try. */
    public static final class Builder {
        private final String name;
        private final Mode mode;
        private final Owner owner;
        private Duration lease = Duration.ofSeconds(30);
        private int permits = 1;
        private int limit;
        private LossChannel lossChannel = NOWHERE;
        private boolean waits;
        private long waitNanos = Long.MAX_VALUE;

        private Builder(String name, Mode mode, Owner owner) {
            this.name = name;
            this.mode = mode;
            this.owner = owner;
        }

        public Builder lease(Duration lease) {
            this.lease = Objects.requireNonNull(lease, "lease");
            return this;
        }

        public Builder permits(int permits) {
            if (permits < 1) {
                throw new IllegalArgumentException("permits must be at least 1, was " + permits);
            }
            this.permits = permits;
            return this;
        }

        /** One permit of a semaphore of {@code limit} permits; 0 (the default) for a plain lock. */
        public Builder limit(int limit) {
            if (limit < 0) {
                throw new IllegalArgumentException("limit must be 0 (a plain lock) or positive, was " + limit);
            }
            this.limit = limit;
            return this;
        }

        public Builder lossChannel(LossChannel lossChannel) {
            this.lossChannel = Objects.requireNonNull(lossChannel, "lossChannel");
            return this;
        }

        /** Whether the caller waits when the first try fails (default: false, a single try). */
        public Builder waits(boolean waits) {
            this.waits = waits;
            return this;
        }

        /** How long the caller waits at most from now (default: {@link Long#MAX_VALUE}, no limit); see {@link AcquireSpec#waitNanos()}. */
        public Builder waitNanos(long waitNanos) {
            if (waitNanos < 0) {
                throw new IllegalArgumentException("waitNanos must not be negative, was " + waitNanos);
            }
            this.waitNanos = waitNanos;
            return this;
        }

        public AcquireSpec build() {
            return new AcquireSpec(this);
        }
    }
}
