package dev.interlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The permit gauges of a watched semaphore name on {@code mem:}: the permits in use and the
 * waiters as the backend lists them, refreshed by the registry's (mock) clock, and bounded as the
 * name tags are.
 */
class PermitGaugesTest {
    final MockClock clock = new MockClock();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
    final String ns = UUID.randomUUID().toString();
    final LockSpace locks = Interlock.open("mem:" + ns);
    final LockSpace other = Interlock.open("mem:" + ns);

    @AfterEach
    void close() {
        locks.close();
        other.close();
        MemoryBackend.forget(ns);
    }

    double gauge(String meter, String name) {
        return registry.get(meter).tags("backend", "mem", "name", name).gauge().value();
    }

    @Test
    void watchPermits_showsThePermitsInUseAndTheWaiters_ofEveryHolder() throws Exception {
        MicrometerLockMetrics.builder(registry).tagNames(5).build().watchPermits(locks, "imports");
        assertThat(gauge("interlock.permits.used", "imports")).isZero();
        assertThat(gauge("interlock.permits.waiting", "imports")).isZero();
        try (Lease a = locks.lock("imports").limit(2).tryAcquire().orElseThrow();
                Lease b = other.lock("imports").limit(2).tryAcquire().orElseThrow()) {
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return other.lock("imports").limit(2).acquire(Duration.ofSeconds(60));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> locks.status("imports").waiters() == 1);
            // Read a moment ago: the same answer until a second has passed on the registry's clock.
            assertThat(gauge("interlock.permits.used", "imports")).isZero();
            clock.add(Duration.ofSeconds(1));
            assertThat(gauge("interlock.permits.used", "imports")).isEqualTo(2);
            assertThat(gauge("interlock.permits.waiting", "imports")).isEqualTo(1);
            a.close();
            waiter.get(10, TimeUnit.SECONDS).close();
        }
        clock.add(Duration.ofSeconds(1));
        assertThat(gauge("interlock.permits.used", "imports")).isZero();
        assertThat(gauge("interlock.permits.waiting", "imports")).isZero();
    }

    @Test
    void aFailedStatusRead_isNaN_notAnExceptionInTheScrape() {
        MicrometerLockMetrics.builder(registry).tagNames(5).build().watchPermits(other, "imports");
        other.close();
        assertThat(gauge("interlock.permits.used", "imports")).isNaN();
    }

    @Test
    void watchedNames_takePlacesAmongTheTaggedNames_andAreRefusedBeyond() {
        MicrometerLockMetrics metrics =
                MicrometerLockMetrics.builder(registry).tagNames(1).build();
        metrics.watchPermits(locks, "imports");
        assertThatThrownBy(() -> metrics.watchPermits(locks, "backups"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("cannot watch the permits of 'backups': the 1 tagged names (tagNames(1)) are taken"
                        + " already; raise the number");
        assertThatThrownBy(() -> metrics.watchPermits(other, "imports"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the permits of 'imports' on mem: are watched already");
        assertThatThrownBy(() -> MicrometerLockMetrics.of(registry).watchPermits(locks, "imports"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lock names are not tagged; give it a place with tagNames(N)");
        assertThat(registry.find("interlock.permits.used").gauges()).hasSize(1);
    }
}
