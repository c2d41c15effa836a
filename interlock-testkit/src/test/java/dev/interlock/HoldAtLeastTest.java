package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.mem.MemoryBackend;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** holdAtLeast on a lease-based backend, on an injected ticker: the lock outlives an early close, and only then. */
class HoldAtLeastTest {
    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler scheduler = new ManualScheduler(ticker);
    final String ns = UUID.randomUUID().toString();
    final LockSpace locks = Interlock.builder("mem:" + ns)
            .ticker(ticker)
            .scheduler(scheduler)
            .executor(scheduler)
            .defaultLease(Duration.ofSeconds(30))
            .open();

    @AfterEach
    void close() {
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void anEarlyClose_keepsTheLockUntilTheTimeIsUp() throws Exception {
        Lease l = locks.lock("job").holdAtLeast(Duration.ofSeconds(10)).acquire();
        ticker.advance(Duration.ofSeconds(3));
        l.close();
        assertThat(locks.tryAcquire("job")).as("kept 7s more").isEmpty();
        ticker.advance(Duration.ofMillis(7100));
        assertThat(locks.tryAcquire("job"))
                .as("free once 10s passed")
                .isPresent()
                .get()
                .satisfies(Lease::close);
    }

    @Test
    void aLateClose_releasesAtOnce() throws Exception {
        Lease l = locks.lock("job").holdAtLeast(Duration.ofSeconds(10)).acquire();
        ticker.advance(Duration.ofSeconds(11));
        l.close();
        assertThat(locks.tryAcquire("job")).isPresent().get().satisfies(Lease::close);
        Lease plain = locks.tryAcquire("job").orElseThrow();
        plain.close();
        assertThat(locks.status("job").isFree())
                .as("without holdAtLeast, close releases")
                .isTrue();
    }
}
