package dev.interlock.micrometer;

import dev.interlock.LockMetrics;
import dev.interlock.Mode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * Records what lock spaces do in a Micrometer {@link MeterRegistry}: give it to
 * {@link dev.interlock.Interlock.Builder#metrics}. The meters, their tags and what each one counts
 * are listed in {@code docs/metrics.md}.
 *
 * <pre>{@code
 * LockSpace locks = Interlock.builder("jdbc:postgresql://db/app")
 *         .metrics(MicrometerLockMetrics.builder(meterRegistry).tagNames(50).build())
 *         .open();
 * }</pre>
 *
 * <p><b>Cardinality:</b> meters are tagged by backend and mode, and by lock name only if
 * {@link Builder#tagNames(int)} says so: the first N distinct names get a tag of their own, every
 * later one shares {@code name=other}, so an application that locks per order id cannot flood the
 * registry. One instance may serve several lock spaces; the cap is shared by them.
 *
 * <p>Meters are registered the first time a backend, mode and name are seen, then kept in a map,
 * so recording an event costs a map lookup and the meter update.
 */
public final class MicrometerLockMetrics implements LockMetrics {
    /** The tag value shared by the names beyond the cap. */
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxNames;
    private final Tags common;
    private final Set<String> names = ConcurrentHashMap.newKeySet();
    private final ConcurrentMap<Key, Meters> meters = new ConcurrentHashMap<>();

    private MicrometerLockMetrics(Builder b) {
        this.registry = b.registry;
        this.maxNames = b.maxNames;
        this.common = b.tags;
    }

    /** Starts configuring metrics recorded in {@code registry}. */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    /** Metrics in {@code registry}, tagged by backend and mode only (no lock names). */
    public static MicrometerLockMetrics of(MeterRegistry registry) {
        return builder(registry).build();
    }

    /** Options of {@link MicrometerLockMetrics}. */
    public static final class Builder {
        private final MeterRegistry registry;
        private int maxNames;
        private Tags tags = Tags.empty();

        private Builder(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /**
         * Tags meters with the lock name for the first {@code maxNames} distinct names, and with
         * {@code name=other} beyond (default 0: no name tag). Keep it to the names you would
         * put on a dashboard; every name costs a set of meters.
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder tagNames(int maxNames) {
            if (maxNames < 0) {
                throw new IllegalArgumentException(
                        "the number of lock names to tag must be 0 or more, was " + maxNames);
            }
            this.maxNames = maxNames;
            return this;
        }

        /** Tags added to every meter (for example the application's lock-space role). */
        public Builder tags(Iterable<Tag> tags) {
            this.tags = this.tags.and(tags);
            return this;
        }

        public MicrometerLockMetrics build() {
            return new MicrometerLockMetrics(this);
        }
    }

    private record Key(String backend, Mode mode, String name) {}

    /** The meters of one backend, mode and name tag. */
    private static final class Meters {
        final Timer waitAcquired;
        final Timer waitBusy;
        final Timer waitTimeout;
        final Counter acquisitions;
        final Counter contended;
        final Counter busy;
        final Counter timeouts;
        final Timer holdReleased;
        final Timer holdLost;
        final Counter renewFailures;
        final Counter lost;

        Meters(MeterRegistry r, Tags tags) {
            waitAcquired = wait(r, tags, "acquired");
            waitBusy = wait(r, tags, "busy");
            waitTimeout = wait(r, tags, "timeout");
            acquisitions = Counter.builder("interlock.acquisitions")
                    .description("Locks acquired")
                    .tags(tags)
                    .register(r);
            contended = Counter.builder("interlock.acquisitions.contended")
                    .description("Locks acquired after at least one try found them busy")
                    .tags(tags)
                    .register(r);
            busy = timeouts(r, tags, "busy");
            timeouts = timeouts(r, tags, "timeout");
            holdReleased = hold(r, tags, "released");
            holdLost = hold(r, tags, "lost");
            renewFailures = Counter.builder("interlock.renew.failures")
                    .description("Lease renewals (or kernel-lock checks) that failed and will be retried")
                    .tags(tags)
                    .register(r);
            lost = Counter.builder("interlock.lost")
                    .description("Leases lost while held")
                    .tags(tags)
                    .register(r);
        }

        private static Timer wait(MeterRegistry r, Tags tags, String outcome) {
            return Timer.builder("interlock.acquire.wait")
                    .description("Time from asking for a lock to getting it or giving up")
                    .tags(tags)
                    .tag("outcome", outcome)
                    .register(r);
        }

        private static Counter timeouts(MeterRegistry r, Tags tags, String kind) {
            return Counter.builder("interlock.acquire.timeouts")
                    .description(
                            "Acquisitions that gave up: a try found the lock busy (busy) or a wait ran out (timeout)")
                    .tags(tags)
                    .tag("kind", kind)
                    .register(r);
        }

        private static Timer hold(MeterRegistry r, Tags tags, String end) {
            return Timer.builder("interlock.hold")
                    .description("Time a lock was held, until released or lost")
                    .tags(tags)
                    .tag("end", end)
                    .register(r);
        }
    }

    private Meters meters(String backend, String name, Mode mode) {
        Key key = new Key(backend, mode, nameTag(name));
        Meters m = meters.get(key);
        if (m == null) {
            m = meters.computeIfAbsent(key, k -> {
                Tags tags = common.and(
                        "backend", k.backend(), "mode", k.mode().name().toLowerCase(Locale.ROOT));
                return new Meters(registry, k.name() == null ? tags : tags.and("name", k.name()));
            });
        }
        return m;
    }

    /** The name tag: the name while fewer than the cap were seen, {@link #OTHER} beyond; null when names are not tagged. */
    private String nameTag(String name) {
        if (maxNames == 0) {
            return null;
        }
        if (names.contains(name)) {
            return name;
        }
        synchronized (names) {
            if (names.contains(name) || names.size() < maxNames) {
                names.add(name);
                return name;
            }
        }
        return OTHER;
    }

    @Override
    public void acquired(String backend, String name, Mode mode, long waitNanos, boolean contended) {
        Meters m = meters(backend, name, mode);
        m.acquisitions.increment();
        if (contended) {
            m.contended.increment();
        }
        m.waitAcquired.record(waitNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void timedOut(String backend, String name, Mode mode, long waitNanos, boolean tryOnly) {
        Meters m = meters(backend, name, mode);
        (tryOnly ? m.busy : m.timeouts).increment();
        (tryOnly ? m.waitBusy : m.waitTimeout).record(waitNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void released(String backend, String name, Mode mode, long holdNanos) {
        meters(backend, name, mode).holdReleased.record(holdNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void renewFailed(String backend, String name, Mode mode, RuntimeException cause) {
        meters(backend, name, mode).renewFailures.increment();
    }

    @Override
    public void lost(String backend, String name, Mode mode, long holdNanos) {
        Meters m = meters(backend, name, mode);
        m.lost.increment();
        m.holdLost.record(holdNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public String toString() {
        return "MicrometerLockMetrics[" + registry.getClass().getSimpleName() + ", names tagged: "
                + (maxNames == 0 ? "none" : "up to " + maxNames) + "]";
    }
}
