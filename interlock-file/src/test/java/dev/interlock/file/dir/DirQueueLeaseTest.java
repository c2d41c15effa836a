package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.FakeClock;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A place in the queue has its own short lease: a waiter that stops (Ctrl-Z, SIGSTOP) while
 * queued makes others step aside for a few seconds, not for the lease of the lock it waits for
 * ({@code --lease 1h}); a waiter that is awake renews its place in time and keeps it. Time is the
 * injected ticker.
 */
class DirQueueLeaseTest {
    /** Arrival times of this space's waiters: long ago, so they are earlier than any waiter on the system clock. */
    static final Instant LONG_AGO = Instant.parse("2020-01-01T00:00:00Z");

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private LockSpace locks;

    @BeforeEach
    void open() {
        // barge=0: the tests release and try again in one space, which must give way to the queue.
        locks = Interlock.builder("dir:" + dir + "?barge=0")
                .ticker(now::get)
                .clock(FakeClock.at(LONG_AGO))
                .defaultLease(Duration.ofHours(1))
                .open();
    }

    @AfterEach
    void close() {
        locks.close();
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    /** An attempt of this process that queues behind {@code held} and is then never driven again: a stopped waiter, alive. */
    private Attempt stoppedWaiter(Owner owner) throws InterruptedException {
        Attempt a = Spaces.backend(locks).attempt(new AcquireSpec("job", Mode.EXCLUSIVE, owner, Duration.ofHours(1)));
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0); // takes its place in the queue
        return a;
    }

    private List<String> queueEntries() throws Exception {
        try (Stream<Path> s = Files.list(dir.resolve("job"))) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("Q."))
                    .toList();
        }
    }

    @Test
    void stoppedWaiter_holdsUpAFreeLockForTheQueueLeaseOnly_notForTheLockLease() throws Exception {
        Lease held = locks.tryAcquire("job").orElseThrow();
        try (Attempt stopped = stoppedWaiter(Owner.newAcquisition())) {
            held.close();
            assertThat(locks.tryAcquire("job"))
                    .as("first sight of the queued waiter")
                    .isEmpty();
            advance(Duration.ofMillis(4_999));
            assertThat(locks.tryAcquire("job"))
                    .as("its place lasts 5s unrenewed")
                    .isEmpty();
            advance(Duration.ofMillis(1));
            try (Lease l = locks.tryAcquire("job")
                    .orElseThrow(() -> new AssertionError("a stopped waiter blocked a free lock past 5s"))) {
                assertThat(queueEntries()).as("the stale place was removed").isEmpty();
            }
        }
    }

    @Test
    void timeoutBehindAStoppedWaiter_saysTheLockIsFreeAndNamesTheWaiter() throws Exception {
        Lease held = locks.tryAcquire("job").orElseThrow();
        Owner owner = Owner.newAcquisition();
        try (Attempt stopped = stoppedWaiter(owner);
                LockSpace real = Interlock.builder("dir:" + dir)
                        .defaultLease(Duration.ofHours(1))
                        .open()) {
            held.close();
            assertThatThrownBy(() -> real.acquire("job", Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("free, but a queued waiter goes first: EX by " + owner.id())
                    .hasMessageContaining("waiting since " + LONG_AGO);
        }
    }

    @Test
    void waiterThatIsAwake_renewsItsPlace_andKeepsItFarBeyondTheQueueLease() throws Exception {
        Lease held = locks.tryAcquire("job").orElseThrow();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LockSpace observer =
                Interlock.builder("dir:" + dir).ticker(now::get).open()) {
            Future<Lease> waiter = pool.submit(() -> locks.acquire("job", Duration.ofDays(1)));
            Awaitility.await()
                    .atMost(Timing.seconds(10))
                    .until(() -> queueEntries().size() == 1);
            DirEntries.Waiter first =
                    DirEntries.Waiter.parse(queueEntries().get(0)).orElseThrow();
            assertThat(first.holder().leaseMs())
                    .as("the queue lease written in the entry")
                    .isEqualTo(5_000);
            for (int step = 0; step < 8; step++) { // 16s on the ticker: more than three queue leases
                String before = queueEntries().get(0);
                advance(Duration.ofSeconds(2));
                Awaitility.await()
                        .atMost(Timing.seconds(10))
                        .until(() -> !queueEntries().equals(List.of(before))
                                && queueEntries().size() == 1);
                assertThat(observer.tryAcquire("job")).isEmpty();
                DirEntries.Waiter w =
                        DirEntries.Waiter.parse(queueEntries().get(0)).orElseThrow();
                assertThat(w.holder().nonce())
                        .as("step %d: the same place, renewed, never judged stale", step)
                        .isEqualTo(first.holder().nonce());
                assertThat(w.arrivedMs()).isEqualTo(first.arrivedMs());
                assertThat(w.beat()).isGreaterThan(step);
            }
            held.close();
            try (Lease l = waiter.get(10, TimeUnit.SECONDS)) {
                assertThat(l.isValid()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
