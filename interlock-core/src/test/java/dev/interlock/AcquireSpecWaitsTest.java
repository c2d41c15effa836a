package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.mem.MemoryBackendProvider;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The core tells a backend whether the caller waits after a failed first try ({@link AcquireSpec#waits()}), and asks a busy single try nothing more. */
class AcquireSpecWaitsTest {
    static final List<AcquireSpec> SEEN = new CopyOnWriteArrayList<>();

    @Test
    void waits_isTrueForEveryWaitingCall_andFalseForASingleTry() throws Exception {
        SEEN.clear();
        try (LockSpace space = Interlock.open("spec-recorder:waits")) {
            space.tryAcquire("a").orElseThrow().close();
            space.acquire("a", Duration.ofSeconds(5)).close();
            space.acquire("a").close();
            space.lock("a").acquire(Duration.ZERO).close();
        }
        assertThat(SEEN).extracting(AcquireSpec::waits).containsExactly(false, true, true, false);
        assertThat(AcquireSpec.builder("a", Mode.EXCLUSIVE, Owner.newAcquisition())
                        .build()
                        .waits())
                .isFalse();
    }

    /** A networked backend bounds a call in flight by the caller's time left (issue 29's brief, jdbc: on a paused server). */
    @Test
    void waitNanos_isTheTimeLeftOfATimedWait_andNoLimitOtherwise() throws Exception {
        SEEN.clear();
        try (LockSpace space = Interlock.open("spec-recorder:waitNanos")) {
            space.tryAcquire("a").orElseThrow().close();
            space.acquire("a", Duration.ofSeconds(5)).close();
            space.acquire("a").close();
        }
        assertThat(SEEN.get(0).waitNanos()).as("a single try").isEqualTo(Long.MAX_VALUE);
        assertThat(SEEN.get(1).waitNanos())
                .as("acquire(5s)")
                .isBetween(
                        Duration.ofSeconds(4).toNanos(), Duration.ofSeconds(5).toNanos());
        assertThat(SEEN.get(2).waitNanos()).as("acquire() without a limit").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aGrantMadeBeforeItsTry_countsItsLeaseFromThen() throws Exception {
        AGE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        try (LockSpace space = Interlock.open("spec-recorder:age")) {
            Lease l = space.lock("a").lease(Duration.ofSeconds(30)).acquire(Duration.ofSeconds(1));
            Duration left = Duration.between(java.time.Instant.now(), l.validUntil());
            // A lease of 30 s that began 5 s before the try: about 25 s left, never 30.
            org.assertj.core.api.Assertions.assertThat(left).isBetween(Duration.ofSeconds(20), Duration.ofSeconds(25));
            l.close();
        } finally {
            AGE_NANOS = 0;
        }
    }

    /** Issue 25: a grant that arrives with more than a third of its lease gone is given back, never returned. */
    @Test
    void aGrantThatCameTooLate_isGivenBack_andNeverReturned() throws Exception {
        AGE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        try (LockSpace space = Interlock.open("spec-recorder:late")) {
            assertThat(space.lock("a").lease(Duration.ofSeconds(30)).tryAcquire())
                    .as("a single try")
                    .isEmpty();
            assertThat(space.status("a").holders()).as("given back").isEmpty();
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> space.lock("a").lease(Duration.ofSeconds(30)).acquire(Duration.ofMillis(200)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("too late")
                    .hasMessageContaining("given back");
            assertThat(space.status("a").holders()).isEmpty();
            AGE_NANOS = 0;
            try (Lease l = space.lock("a").lease(Duration.ofSeconds(30)).acquire(Duration.ofSeconds(1))) {
                assertThat(l.isValid()).isTrue();
            }
        } finally {
            AGE_NANOS = 0;
        }
    }

    @Test
    void tryAcquire_busy_isEmpty_withoutAskingWhoBlocked() throws Exception {
        // Who blocked a try is asked only to build a LockTimeoutException: a busy single try, which
        // ShedLock and Spring make in a loop, must build none (a stack trace per busy try).
        try (LockSpace space = Interlock.open("spec-recorder:busy")) {
            Lease held = space.tryAcquire("a").orElseThrow();
            BLOCKERS_ASKED.set(0);
            for (int i = 0; i < 3; i++) {
                assertThat(space.tryAcquire("a")).isEmpty();
            }
            assertThat(BLOCKERS_ASKED)
                    .as("blockers() asked by busy single tries")
                    .hasValue(0);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> space.lock("a").acquire(Duration.ZERO))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("is busy");
            assertThat(BLOCKERS_ASKED)
                    .as("a timed acquire still says who blocked it")
                    .hasValue(1);
            held.close();
        }
    }

    static final java.util.concurrent.atomic.AtomicInteger BLOCKERS_ASKED =
            new java.util.concurrent.atomic.AtomicInteger();

    static volatile long AGE_NANOS;

    /** mem: underneath, every spec recorded; registered in this module's test resources. */
    public static final class RecordingProvider implements LockBackendProvider {
        public RecordingProvider() {}

        @Override
        public Set<String> schemes() {
            return Set.of("spec-recorder");
        }

        @Override
        public String description() {
            return "mem: with every AcquireSpec recorded (tests)";
        }

        @Override
        public LockBackend open(BackendConfig config) {
            LockBackend mem = new MemoryBackendProvider()
                    .open(BackendConfig.builder("mem:" + config.location()).build());
            return new LockBackend() {
                @Override
                public String description() {
                    return mem.description();
                }

                @Override
                public boolean leaseBased() {
                    return mem.leaseBased();
                }

                @Override
                public Attempt attempt(AcquireSpec spec) {
                    SEEN.add(spec);
                    Attempt a = mem.attempt(spec);
                    return new Attempt() {
                        @Override
                        public java.util.Optional<dev.interlock.spi.Grant> tryAcquire() {
                            long age = AGE_NANOS;
                            return a.tryAcquire()
                                    .map(g -> age == 0
                                            ? g
                                            : new dev.interlock.spi.Grant() {
                                                @Override
                                                public long token() {
                                                    return g.token();
                                                }

                                                @Override
                                                public java.time.Instant acquiredAt() {
                                                    return g.acquiredAt();
                                                }

                                                @Override
                                                public long leaseAgeNanos() {
                                                    return age;
                                                }

                                                @Override
                                                public void renew(Duration lease) {
                                                    g.renew(lease);
                                                }

                                                @Override
                                                public void release() {
                                                    g.release();
                                                }
                                            });
                        }

                        @Override
                        public void await(long nanos) throws InterruptedException {
                            a.await(nanos);
                        }

                        @Override
                        public List<dev.interlock.HolderInfo> blockers() {
                            BLOCKERS_ASKED.incrementAndGet();
                            return a.blockers();
                        }

                        @Override
                        public void close() {
                            a.close();
                        }
                    };
                }

                @Override
                public LockInfo inspect(String name) {
                    return mem.inspect(name);
                }

                @Override
                public List<LockInfo> list() {
                    return mem.list();
                }

                @Override
                public void close() {
                    mem.close();
                }
            };
        }
    }
}
