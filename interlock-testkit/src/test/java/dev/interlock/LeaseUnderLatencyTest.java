package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.mem.MemoryBackend;
import dev.interlock.testkit.FakeClock;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import dev.interlock.testkit.Timing;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease core under a slow or hung backend: time is driven by a manual scheduler on a fake
 * ticker, while backend calls and listeners run on the space's own real threads, so a renewal can
 * really hang while the timer goes on.
 */
class LeaseUnderLatencyTest {
    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler timer = new ManualScheduler(ticker);
    final FakeClock wall = FakeClock.at(Instant.parse("2026-11-21T03:00:00Z"));
    final String ns = UUID.randomUUID().toString();
    LockSpace locks;
    MemoryBackend backend;

    @BeforeEach
    void open() {
        locks = Interlock.builder("mem:" + ns)
                .ticker(ticker)
                .clock(wall)
                .scheduler(timer)
                .defaultLease(Duration.ofSeconds(30))
                .open();
        backend = MemoryBackend.of(ns).orElseThrow();
    }

    @AfterEach
    void close() {
        backend.restore();
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void isValidAndValidUntil_answerAtOnce_whileARenewalIsHung() {
        Lease l = locks.tryAcquire("hang-1").orElseThrow();
        backend.pause();
        timer.advance(Duration.ofSeconds(10)); // the renewal is due: it starts on a backend thread and hangs
        await().atMost(Timing.seconds(10)).until(() -> backend.calls().renewals() == 1);
        long[] nanos = new long[1001];
        for (int i = 0; i < nanos.length; i++) {
            long t0 = System.nanoTime();
            boolean valid = l.isValid();
            Instant until = l.validUntil();
            nanos[i] = System.nanoTime() - t0;
            assertThat(valid).isTrue();
            assertThat(until).isEqualTo(wall.instant().plusSeconds(20));
        }
        Arrays.sort(nanos);
        assertThat(Duration.ofNanos(nanos[nanos.length / 2]))
                .as("median of isValid()+validUntil() while the renewal hangs")
                .isLessThan(Duration.ofMillis(1));
        assertThat(backend.calls().renewals()).as("still the one hung renewal").isEqualTo(1);
    }

    @Test
    void renewalHungLongerThanTheLease_isLostAtTheLossPoint_andTellsTheHolder() {
        Lease l = locks.tryAcquire("hang-1").orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        l.onLost(told::add);
        backend.pause();
        timer.advance(Duration.ofSeconds(23));
        assertThat(l.isValid()).isTrue();
        assertThat(told).isEmpty();
        timer.advance(Duration.ofSeconds(1)); // 24s = the loss point of a 30s lease
        assertThat(l.isValid())
                .as("lost on the timer, not when the call returns")
                .isFalse();
        await().atMost(Timing.seconds(10)).until(() -> told.size() == 1);
        assertThat(told.get(0)).hasMessageContaining("renewal did not answer in time");
    }

    @Test
    void backendCallsHungOnEveryThread_doNotDelayAnotherLeasesLossNotice() {
        // Enough hung renewals to occupy every backend thread of the space...
        List<Lease> hung = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            hung.add(locks.lock("hang-" + i)
                    .lease(Duration.ofSeconds(600))
                    .tryAcquire()
                    .orElseThrow());
        }
        backend.pause("hang");
        timer.advance(Duration.ofSeconds(200));
        await().atMost(Timing.seconds(10)).until(() -> backend.calls().renewals() >= 4);
        // ...then a short lease whose renewals fail: its loss must still be noticed and told on time.
        Lease other =
                locks.lock("other").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        other.onLost(told::add);
        backend.cut();
        timer.advance(Duration.ofSeconds(8)); // the loss point of a 10s lease
        assertThat(other.isValid()).isFalse();
        await().atMost(Timing.seconds(10)).until(() -> told.size() == 1);
        assertThat(hung).allSatisfy(h -> assertThat(h.isValid()).isTrue());
    }
}
