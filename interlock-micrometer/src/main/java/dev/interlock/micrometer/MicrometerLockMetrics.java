package dev.interlock.micrometer;

import dev.interlock.LockMetrics;
import dev.interlock.LockSpace;
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
 *
 * <p><b>Semaphores:</b> {@link #watchPermits} adds, for a name you list, gauges of the permits in
 * use and the waiters across every process, read from the backend (a semaphore's use is the
 * fleet's, not this process's). Watched names take places among the tagged names.
 */
public final class MicrometerLockMetrics implements LockMetrics {
    /** The tag value shared by the names beyond the cap. */
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxNames;
    private final Tags common;
    private final Set<String> names = ConcurrentHashMap.newKeySet();
    private final ConcurrentMap<Key, Meters> meters = new ConcurrentHashMap<>();
    /** The names whose permits are watched, as {@code backend:name}. */
    private final Set<String> watched = ConcurrentHashMap.newKeySet();

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

    /**
     * Adds the gauges {@code interlock.permits.used} (the permits of {@code name} held now, by
     * every process: the holders {@code space.status(name)} lists) and
     * {@code interlock.permits.waiting} (the acquisitions waiting for one, where the backend knows
     * them, else NaN), tagged {@code backend} and {@code name} (and the common tags). Meant for
     * semaphore names (of a plain lock they give its holders and waiters). The status is read at
     * most once a second, when the registry reads the gauges: one backend read per name per
     * scrape; a failed read gives NaN.
     *
     * <p>Bounded as the name tags are: {@code name} takes a place among the {@link
     * Builder#tagNames(int)} first names (if it has none yet), and is refused when they are all
     * taken. Watching a name twice (with any space) is refused too: the gauges exist already.
     *
     * @return this, to watch more names
     * @throws IllegalStateException if {@code name} cannot have a tag of its own, or is watched already
     */
    public MicrometerLockMetrics watchPermits(LockSpace space, String name) {
        Objects.requireNonNull(space, "space");
        Objects.requireNonNull(name, "name");
        if (name.equals(OTHER)) {
            throw new IllegalStateException("cannot watch the permits of '" + OTHER + "': it is the name tag of the"
                    + " names beyond tagNames(N), so its gauges would not be this name's alone");
        }
        String tag = maxNames == 0 ? null : nameTag(name);
        if (!name.equals(tag)) {
            throw new IllegalStateException("cannot watch the permits of '" + name + "': "
                    + (maxNames == 0
                            ? "lock names are not tagged; give it a place with tagNames(N)"
                            : "the " + maxNames + " tagged names (tagNames(" + maxNames + ")) are taken already;"
                                    + " raise the number"));
        }
        String backend = scheme(space.uri());
        if (!watched.add(backend + ":" + name)) {
            throw new IllegalStateException("the permits of '" + name + "' on " + backend + ": are watched already");
        }
        PermitGauges.register(registry, space, name, common.and("backend", backend, "name", name));
        return this;
    }

    /** The URI scheme of a space, the {@code backend} tag. */
    private static String scheme(String uri) {
        int colon = uri.indexOf(':');
        return (colon > 0 ? uri.substring(0, colon) : uri).toLowerCase(Locale.ROOT);
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
