package dev.interlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.testkit.Timing;
import dev.interlock.testservers.ZkTestServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Micrometer meters of a {@code zk:} space, on a ZooKeeper server started by the test, in real
 * time (the session keeper runs on the space's ticker, so a fake one would make its jumps look like
 * a paused process): acquisitions, busy tries, a contended wait, a release and a lock broken by
 * another process, each tagged {@code backend=zk}.
 */
class ZkMicrometerMetricsTest {
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final String uri = ZkTestServer.newUri("");
    final ExecutorService pool = Executors.newCachedThreadPool();
    final LockSpace locks =
            Interlock.builder(uri).metrics(MicrometerLockMetrics.of(registry)).open();
    final LockSpace other = Interlock.open(uri);

    @AfterEach
    void close() {
        pool.shutdownNow();
        locks.close();
        other.close();
    }

    Timer timer(String name, String... tags) {
        return registry.get(name).tags("backend", "zk").tags(tags).timer();
    }

    Counter counter(String name, String... tags) {
        return registry.get(name).tags("backend", "zk").tags(tags).counter();
    }

    @Test
    void acquisitions_busyTries_aContendedWait_andReleases_areCounted() throws Exception {
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThat(locks.tryAcquire("job")).isEmpty();
        assertThat(counter("interlock.acquire.timeouts", "mode", "exclusive", "kind", "busy")
                        .count())
                .isEqualTo(1);

        Future<Long> waiter = pool.submit(() -> {
            try (Lease l = locks.acquire("job", Timing.seconds(60))) {
                return l.token();
            }
        });
        await().atMost(Timing.seconds(10)).until(() -> other.status("job").waiters() == 1);
        held.close();
        assertThat(waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isGreaterThan(held.token());
        assertThat(counter("interlock.acquisitions", "mode", "exclusive").count())
                .isEqualTo(1);
        assertThat(counter("interlock.acquisitions.contended", "mode", "exclusive")
                        .count())
                .isEqualTo(1);
        assertThat(timer("interlock.hold", "end", "released").count()).isEqualTo(1);

        locks.acquire("shared", Mode.SHARED).close();
        assertThat(counter("interlock.acquisitions", "mode", "shared").count()).isEqualTo(1);
    }

    @Test
    void aLockBrokenByAnotherProcess_isCountedLost() {
        Lease l = locks.tryAcquire("job").orElseThrow();
        assertThat(other.breakLock("job", l.owner().id())).isTrue();
        await().atMost(Timing.seconds(10)).until(() -> !l.isValid()); // told by a watch on its node
        // The loss is counted by the thread that declared it, just after the lease turned invalid.
        await().atMost(Timing.seconds(10))
                .until(() -> counter("interlock.lost", "mode", "exclusive").count() >= 1);
        assertThat(counter("interlock.lost", "mode", "exclusive").count()).isEqualTo(1);
        assertThat(timer("interlock.hold", "end", "lost").count()).isEqualTo(1);
        l.close();
        assertThat(registry.find("interlock.hold").tag("end", "released").timers())
                .as("closing a lost lease releases nothing")
                .allSatisfy(t -> assertThat(t.count()).isZero());
    }
}
