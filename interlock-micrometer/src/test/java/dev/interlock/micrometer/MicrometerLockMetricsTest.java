package dev.interlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.mem.MemoryBackend;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import dev.interlock.testkit.Timing;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Micrometer meters of a {@code mem:} space on an injected ticker and a manual scheduler:
 * every wait and hold time below is exact because time passes only when the test says so.
 */
class MicrometerLockMetricsTest {
    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler scheduler = new ManualScheduler(ticker);
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final String ns = UUID.randomUUID().toString();
    final ExecutorService pool = Executors.newCachedThreadPool();
    LockSpace locks;

    LockSpace open(MicrometerLockMetrics metrics) {
        locks = Interlock.builder("mem:" + ns)
                .ticker(ticker)
                .scheduler(scheduler)
                .executor(scheduler)
                .defaultLease(Duration.ofSeconds(30))
                .metrics(metrics)
                .open();
        return locks;
    }

    MemoryBackend backend() {
        return MemoryBackend.of(ns).orElseThrow();
    }

    @AfterEach
    void close() {
        pool.shutdownNow();
        if (locks != null) {
            locks.close();
        }
        MemoryBackend.forget(ns);
    }

    Timer timer(String name, String... tags) {
        return registry.get(name).tags("backend", "mem").tags(tags).timer();
    }

    Counter counter(String name, String... tags) {
        return registry.get(name).tags("backend", "mem").tags(tags).counter();
    }

    @Test
    void anAcquisition_countsItsWaitAndItsHoldTime() throws Exception {
        open(MicrometerLockMetrics.of(registry));
        Lease l = locks.acquire("job", Duration.ofSeconds(1));
        assertThat(counter("interlock.acquisitions", "mode", "exclusive").count())
                .isEqualTo(1);
        assertThat(counter("interlock.acquisitions.contended", "mode", "exclusive")
                        .count())
                .isZero();
        assertThat(timer("interlock.acquire.wait", "outcome", "acquired").count())
                .isEqualTo(1);
        assertThat(timer("interlock.acquire.wait", "outcome", "acquired").totalTime(TimeUnit.NANOSECONDS))
                .isZero();
        ticker.advance(Duration.ofMillis(5250));
        l.close();
        Timer hold = timer("interlock.hold", "end", "released");
        assertThat(hold.count()).isEqualTo(1);
        assertThat(hold.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(5250);
        assertThat(registry.find("interlock.acquisitions").tag("name", "job").meters())
                .as("no name tag by default")
                .isEmpty();
    }

    @Test
    void aTryThatFindsItBusy_isABusyTimeout_andAWaitThatRunsOut_aTimeout() throws Exception {
        open(MicrometerLockMetrics.of(registry));
        Lease held = locks.acquire("job", Mode.SHARED);
        assertThat(locks.tryAcquire("job")).isEmpty();
        assertThat(counter("interlock.acquire.timeouts", "mode", "exclusive", "kind", "busy")
                        .count())
                .isEqualTo(1);
        assertThat(timer("interlock.acquire.wait", "mode", "exclusive", "outcome", "busy")
                        .count())
                .isEqualTo(1);

        int tries = backend().calls().tries();
        Future<Throwable> waiter = pool.submit(() -> {
            try {
                locks.acquire("job", Duration.ofMillis(200)).close();
                return null;
            } catch (LockTimeoutException e) {
                return e;
            }
        });
        await().atMost(Timing.seconds(10)).until(() -> backend().calls().tries() > tries);
        ticker.advance(Duration.ofSeconds(3)); // the waiter's next look at its deadline finds it passed
        assertThat(waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(LockTimeoutException.class);
        assertThat(counter("interlock.acquire.timeouts", "mode", "exclusive", "kind", "timeout")
                        .count())
                .isEqualTo(1);
        assertThat(timer("interlock.acquire.wait", "mode", "exclusive", "outcome", "timeout")
                        .totalTime(TimeUnit.SECONDS))
                .isGreaterThanOrEqualTo(3);
        assertThat(counter("interlock.acquisitions", "mode", "shared").count()).isEqualTo(1);
        assertThat(counter("interlock.acquisitions", "mode", "exclusive").count())
                .as("none of the exclusive tries")
                .isZero();
        held.close();
    }

    @Test
    void aWaitThatEndsWithTheLock_isContended_andTimed() throws Exception {
        open(MicrometerLockMetrics.of(registry));
        Lease held = locks.acquire("job");
        int tries = backend().calls().tries();
        Future<Long> waiter = pool.submit(() -> {
            try (Lease l = locks.acquire("job", Timing.seconds(60))) {
                return l.token();
            }
        });
        await().atMost(Timing.seconds(10)).until(() -> backend().calls().tries() > tries);
        ticker.advance(Duration.ofMillis(1500));
        held.close();
        assertThat(waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isGreaterThan(held.token());
        assertThat(counter("interlock.acquisitions").count()).isEqualTo(2);
        assertThat(counter("interlock.acquisitions.contended").count()).isEqualTo(1);
        Timer wait = timer("interlock.acquire.wait", "outcome", "acquired");
        assertThat(wait.count()).isEqualTo(2);
        assertThat(wait.max(TimeUnit.MILLISECONDS))
                .as("the waiter waited exactly while the ticker moved")
                .isEqualTo(1500);
    }

    @Test
    void renewFailures_thenTheLoss_areCounted() {
        open(MicrometerLockMetrics.of(registry));
        Lease l = locks.tryAcquire("job").orElseThrow();
        backend().cut();
        scheduler.advance(Duration.ofSeconds(11));
        assertThat(counter("interlock.renew.failures").count())
                .as("the renewal at 10s failed")
                .isEqualTo(1);
        assertThat(counter("interlock.lost").count()).isZero();
        scheduler.advance(Duration.ofSeconds(14));
        assertThat(l.isValid()).isFalse();
        assertThat(counter("interlock.renew.failures").count())
                .as("retried before the loss point")
                .isGreaterThanOrEqualTo(2);
        assertThat(counter("interlock.lost").count()).isEqualTo(1);
        Timer holdLost = timer("interlock.hold", "end", "lost");
        assertThat(holdLost.count()).isEqualTo(1);
        assertThat(holdLost.totalTime(TimeUnit.SECONDS))
                .as("lost at the loss point, a fifth before the 30s lease ends")
                .isEqualTo(24);
        l.close();
        assertThat(timer("interlock.hold", "end", "released").count())
                .as("closing a lost lease releases nothing")
                .isZero();
    }

    @Test
    void aLockTakenAway_isCountedLostWhenTheRenewalFindsIt() {
        open(MicrometerLockMetrics.of(registry));
        Lease l = locks.tryAcquire("job").orElseThrow();
        assertThat(backend().takeAway("job", l.owner().id())).isTrue();
        scheduler.advance(Duration.ofSeconds(10));
        assertThat(l.isValid()).isFalse();
        assertThat(counter("interlock.lost").count()).isEqualTo(1);
        assertThat(counter("interlock.renew.failures").count())
                .as("a loss is not a failed renewal")
                .isZero();
        assertThat(timer("interlock.hold", "end", "lost").totalTime(TimeUnit.SECONDS))
                .isEqualTo(10);
    }

    @Test
    void names_areTaggedUpToTheCap_thenShareOther() {
        open(MicrometerLockMetrics.builder(registry).tagNames(2).build());
        for (String name : List.of("a", "b", "c", "d", "a", "c")) {
            locks.tryAcquire(name).orElseThrow().close();
        }
        assertThat(counter("interlock.acquisitions", "name", "a").count()).isEqualTo(2);
        assertThat(counter("interlock.acquisitions", "name", "b").count()).isEqualTo(1);
        assertThat(counter("interlock.acquisitions", "name", MicrometerLockMetrics.OTHER)
                        .count())
                .isEqualTo(3);
        assertThat(registry.find("interlock.acquisitions").meters())
                .extracting(m -> m.getId().getTag("name"))
                .containsExactlyInAnyOrder("a", "b", "other");
        assertThatThrownBy(() -> MicrometerLockMetrics.builder(registry).tagNames(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be 0 or more");
    }

    @Test
    void everyMeter_carriesTheBackendAndTheCommonTags() throws Exception {
        open(MicrometerLockMetrics.builder(registry)
                .tags(io.micrometer.core.instrument.Tags.of("app", "billing"))
                .build());
        locks.acquire("job").close();
        List<Meter> all = registry.getMeters();
        assertThat(all).isNotEmpty().allSatisfy(m -> {
            assertThat(m.getId().getTag("backend")).isEqualTo("mem");
            assertThat(m.getId().getTag("app")).isEqualTo("billing");
            assertThat(m.getId().getName()).startsWith("interlock.");
        });
    }
}
