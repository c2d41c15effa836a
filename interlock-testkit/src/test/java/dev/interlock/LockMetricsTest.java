package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.mem.MemoryBackend;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The core's calls to {@link LockMetrics}: which event, with which times, and never failing a lock operation. */
class LockMetricsTest {
    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler scheduler = new ManualScheduler(ticker);
    final String ns = UUID.randomUUID().toString();
    final List<String> events = new CopyOnWriteArrayList<>();
    LockSpace locks;

    final LockMetrics recording = new LockMetrics() {
        @Override
        public void acquired(String backend, String name, Mode mode, long waitNanos, boolean contended) {
            events.add("acquired " + backend + " " + name + " " + mode.shortName() + " wait=" + waitNanos
                    + " contended=" + contended);
        }

        @Override
        public void timedOut(String backend, String name, Mode mode, long waitNanos, boolean tryOnly) {
            events.add("timedOut " + name + " tryOnly=" + tryOnly);
        }

        @Override
        public void released(String backend, String name, Mode mode, long holdNanos) {
            events.add("released " + name + " hold=" + Duration.ofNanos(holdNanos));
        }

        @Override
        public void renewFailed(String backend, String name, Mode mode, RuntimeException cause) {
            events.add("renewFailed " + name);
        }

        @Override
        public void lost(String backend, String name, Mode mode, long holdNanos) {
            events.add("lost " + name + " hold=" + Duration.ofNanos(holdNanos));
        }
    };

    LockSpace open(LockMetrics metrics) {
        locks = Interlock.builder("mem:" + ns)
                .ticker(ticker)
                .scheduler(scheduler)
                .executor(scheduler)
                .defaultLease(Duration.ofSeconds(30))
                .metrics(metrics)
                .open();
        return locks;
    }

    @AfterEach
    void close() {
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void eachEvent_isToldOnce_withTimesOnTheSpacesTicker() {
        open(recording);
        Lease l = locks.tryAcquire("job").orElseThrow();
        assertThat(locks.tryAcquire("job", Mode.SHARED)).isEmpty();
        ticker.advance(Duration.ofSeconds(2));
        l.close();
        l.close();
        Lease m = locks.tryAcquire("job").orElseThrow();
        MemoryBackend.of(ns).orElseThrow().cut();
        scheduler.advance(Duration.ofSeconds(25));
        assertThat(m.isValid()).isFalse();
        assertThat(events)
                .startsWith(
                        "acquired mem job EX wait=0 contended=false",
                        "timedOut job tryOnly=true",
                        "released job hold=PT2S",
                        "acquired mem job EX wait=0 contended=false",
                        "renewFailed job");
        assertThat(events).endsWith("lost job hold=PT24S");
        assertThat(events)
                .filteredOn(e -> e.startsWith("released"))
                .as("a second close and a loss release nothing")
                .hasSize(1);
        assertThat(events).filteredOn(e -> e.startsWith("lost")).hasSize(1);
    }

    @Test
    void failingMetrics_neverFailALockOperation() {
        open(new LockMetrics() {
            @Override
            public void acquired(String backend, String name, Mode mode, long waitNanos, boolean contended) {
                throw new IllegalStateException("metrics down");
            }

            @Override
            public void released(String backend, String name, Mode mode, long holdNanos) {
                throw new IllegalStateException("metrics down");
            }
        });
        Lease l = locks.tryAcquire("job").orElseThrow();
        assertThat(l.isValid()).isTrue();
        l.close();
        assertThat(locks.status("job").isFree()).isTrue();
    }

    @Test
    void theDefault_recordsNothing() {
        open(LockMetrics.NONE);
        locks.tryAcquire("job").orElseThrow().close();
        assertThat(events).isEmpty();
    }
}
