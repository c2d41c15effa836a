package dev.interlock.micrometer;

import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.TimeUnit;

/**
 * The gauges of one watched name ({@link MicrometerLockMetrics#watchPermits}): how many permits
 * (holders) it has now and how many wait for one, across every process that uses the name, read
 * from the backend with {@link LockSpace#status(String)}: what {@code interlock status} shows.
 *
 * <p>The events a space reports ({@link dev.interlock.LockMetrics}) are this process's own; a
 * semaphore's use is the fleet's, which only the backend knows. The status is read when the
 * registry reads a gauge (a scrape), at most once per {@link #FRESH_NANOS} (on the registry's
 * clock) for both gauges; a read that fails gives NaN, never an exception in the scrape.
 */
final class PermitGauges {
    /** How long one status read serves both gauges: one backend read per name per scrape. */
    static final long FRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final LockSpace space;
    private final String name;
    private final Clock clock;
    private LockInfo last;
    private long readAt;

    private PermitGauges(LockSpace space, String name, Clock clock) {
        this.space = space;
        this.name = name;
        this.clock = clock;
    }

    /** Registers {@code interlock.permits.used} and {@code interlock.permits.waiting} for {@code name} with {@code tags}. */
    static void register(MeterRegistry registry, LockSpace space, String name, Tags tags) {
        PermitGauges g = new PermitGauges(space, name, registry.config().clock());
        Gauge.builder("interlock.permits.used", g, PermitGauges::used)
                .description("Permits of the name held now, by every process (the holders status lists)")
                .tags(tags)
                .strongReference(true)
                .register(registry);
        Gauge.builder("interlock.permits.waiting", g, PermitGauges::waiting)
                .description("Acquisitions waiting for a permit of the name now, in every process (NaN if the backend"
                        + " cannot tell)")
                .tags(tags)
                .strongReference(true)
                .register(registry);
    }

    private double used() {
        LockInfo info = status();
        return info == null ? Double.NaN : info.holders().size();
    }

    private double waiting() {
        LockInfo info = status();
        return info == null || info.waiters() < 0 ? Double.NaN : info.waiters();
    }

    private synchronized LockInfo status() {
        long now = clock.monotonicTime();
        if (last == null || now - readAt >= FRESH_NANOS) {
            try {
                last = space.status(name);
            } catch (RuntimeException e) {
                last = null; // the backend unreachable, the space closed: unknown until a read succeeds
            }
            readAt = now;
        }
        return last;
    }
}
