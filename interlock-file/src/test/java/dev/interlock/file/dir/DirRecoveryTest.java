package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash recovery on an injected monotonic ticker: holders on "other hosts" (records with another
 * boot id) are reclaimed only after a whole unrenewed lease, dead holders on this host at once,
 * and wall-clock jumps change nothing.
 */
class DirRecoveryTest {
    private static final String OTHER_BOOT = "feedfacefeedfacefeedfacefeedface";

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicLong wallOffset = new AtomicLong();
    private LockSpace locks;
    private Process child;

    /** A wall clock that tests can jump by hours. */
    private final Clock jumpy =
            dev.interlock.testkit.FakeClock.from(() -> Instant.now().plusMillis(wallOffset.get()));

    @BeforeEach
    void open() {
        locks = Interlock.builder("dir:" + dir)
                .ticker(now::get)
                .clock(jumpy)
                .defaultLease(Duration.ofSeconds(60))
                .open();
    }

    @AfterEach
    void close() {
        locks.close();
        if (child != null) {
            child.destroyForcibly();
        }
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    private Path lockDir(String name) {
        return dir.resolve(DirNames.encode(name));
    }

    /** The current gate file of {@code name} (the lock directory must exist). */
    private String gate(String name) throws IOException {
        try (Stream<Path> s = Files.list(lockDir(name))) {
            List<String> gates = s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("F.") || n.startsWith("X."))
                    .toList();
            assertThat(gates).hasSize(1);
            return gates.get(0);
        }
    }

    private static DirEntries.Holder holder(long pid, long start, String boot, long leaseMs) {
        return new DirEntries.Holder(
                leaseMs,
                Instant.now().getEpochSecond(),
                pid,
                start,
                DirSelf.pidNamespace(),
                boot,
                "abcdef0123456789",
                "other-host");
    }

    private static DirEntries.Holder sameHost(long pid, long start) {
        String boot = ProcessIdentity.current().bootId().replace("-", "");
        return holder(pid, start, boot, 60_000);
    }

    /** Makes {@code h} the writer of {@code name}, as if it had acquired it and then stopped. */
    private long plantWriter(String name, DirEntries.Holder h) throws IOException {
        locks.tryAcquire(name).orElseThrow().close();
        String free = gate(name);
        long t = DirEntries.Gate.parse(free).orElseThrow().token() + 1;
        Files.move(lockDir(name).resolve(free), lockDir(name).resolve(DirEntries.Gate.writer(t, 0, h)));
        return t;
    }

    @Test
    void otherHostWriter_isReclaimedOnlyAfterAWholeUnrenewedLease_whateverTheWallClockDoes() throws Exception {
        // Same pid as ours, so a pid check would even say "alive"; another boot id means: cannot tell, use the lease.
        long t = plantWriter("job", holder(ProcessHandle.current().pid(), 1, OTHER_BOOT, 10_000));
        assertThat(locks.status("job").holders()).singleElement().satisfies(h -> {
            assertThat(h.host()).hasValue("other-host");
            assertThat(h.token()).hasValue(t);
        });
        assertThat(locks.tryAcquire("job")).as("first sight").isEmpty();
        advance(Duration.ofMillis(9_999));
        wallOffset.set(TimeUnit.HOURS.toMillis(5));
        assertThat(locks.tryAcquire("job"))
                .as("wall clock 5h ahead, lease not over on the ticker")
                .isEmpty();
        wallOffset.set(-TimeUnit.HOURS.toMillis(7));
        assertThat(locks.tryAcquire("job", Mode.SHARED))
                .as("wall clock 7h back")
                .isEmpty();
        advance(Duration.ofMillis(1));
        try (Lease l = locks.tryAcquire("job").orElseThrow()) {
            assertThat(l.token()).isEqualTo(t + 1);
        }
    }

    @Test
    void otherHostWriter_thatRenews_isNeverReclaimed() throws Exception {
        DirEntries.Holder h = holder(4242, 1, OTHER_BOOT, 10_000);
        long t = plantWriter("job", h);
        Path d = lockDir("job");
        for (int beat = 0; beat < 10; beat++) {
            assertThat(locks.tryAcquire("job")).as("beat %d", beat).isEmpty();
            advance(Duration.ofSeconds(6));
            assertThat(locks.tryAcquire("job")).isEmpty();
            Files.move(
                    d.resolve(DirEntries.Gate.writer(t, beat, h)), d.resolve(DirEntries.Gate.writer(t, beat + 1, h)));
        }
        assertThat(locks.tryAcquire("job"))
                .as("first sight of the last renewal")
                .isEmpty();
        advance(Duration.ofMillis(9_999));
        assertThat(locks.tryAcquire("job")).isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(locks.tryAcquire("job")).isPresent().get().satisfies(Lease::close);
    }

    @Test
    void sameHostWriter_whoseProcessIsGone_isReclaimedAtOnce() throws Exception {
        child = new ProcessBuilder("sleep", "600").start();
        long pid = child.pid();
        long start = ProcessIdentity.startTicks(pid).orElseThrow();
        child.destroyForcibly().waitFor();
        long t = plantWriter("job", sameHost(pid, start));
        try (Lease l = locks.tryAcquire("job").orElseThrow()) {
            assertThat(l.token()).isEqualTo(t + 1);
        }
    }

    @Test
    void sameHostWriter_whosePidWasReused_isReclaimedAtOnce_andALiveOneIsNot() throws Exception {
        child = new ProcessBuilder("sleep", "600").start();
        long pid = child.pid();
        long start = ProcessIdentity.startTicks(pid).orElseThrow();
        plantWriter("alive", sameHost(pid, start));
        assertThat(locks.tryAcquire("alive")).isEmpty();
        assertThat(locks.tryAcquire("alive", Mode.SHARED)).isEmpty();
        plantWriter("reused", sameHost(pid, start + 1)); // same pid, another start time: the holder is gone
        assertThat(locks.tryAcquire("reused")).isPresent().get().satisfies(Lease::close);
    }

    @Test
    void recordOfAnEarlierProcessWithOurPid_isDead_butOurOwnAcquisitionsAreAlive() throws Exception {
        long pid = ProcessHandle.current().pid();
        long start = ProcessIdentity.current().startTicks();
        plantWriter("earlier", sameHost(pid, start - 1)); // a crashed process that had our pid before us
        assertThat(locks.tryAcquire("earlier")).isPresent().get().satisfies(Lease::close);
        plantWriter("ours", sameHost(pid, start)); // another acquisition of this very process
        assertThat(locks.tryAcquire("ours")).isEmpty();
    }

    @Test
    void otherHostReader_holdsOffAWriterUntilItsLeaseIsOver() throws Exception {
        locks.tryAcquire("rw").orElseThrow().close();
        Path d = lockDir("rw");
        String free = gate("rw");
        DirEntries.Gate g = DirEntries.Gate.parse(free).orElseThrow();
        long t = g.token() + 1;
        Files.move(d.resolve(free), d.resolve(DirEntries.Gate.free(t, g.lastWriter(), "abcdef0123456789")));
        DirEntries.Holder reader = holder(1, 1, OTHER_BOOT, 5_000);
        Files.createFile(d.resolve(DirEntries.Beat.name(t, 0, reader)));
        Files.createFile(d.resolve(DirEntries.Reader.name(t, reader)));
        assertThat(locks.status("rw").holders())
                .singleElement()
                .satisfies(h -> assertThat(h.mode()).isEqualTo(Mode.SHARED));
        try (Lease other = locks.tryAcquire("rw", Mode.SHARED).orElseThrow()) {
            assertThat(other.token()).isGreaterThan(t);
        }
        assertThat(locks.tryAcquire("rw")).isEmpty();
        advance(Duration.ofMillis(4_999));
        assertThat(locks.tryAcquire("rw")).isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(locks.tryAcquire("rw")).isPresent().get().satisfies(Lease::close);
        try (Stream<Path> s = Files.list(d)) {
            assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("R.") || n.startsWith("B."));
        }
    }

    @Test
    void pausedHolder_losesTheLockAndCannotFreeTheNewHolders() throws Exception {
        LockSpace elsewhere = Interlock.builder("dir:" + dir).ticker(now::get).open();
        try {
            Lease paused = locks.lock("job").lease(Duration.ofSeconds(60)).acquire(Duration.ZERO);
            assertThat(elsewhere.tryAcquire("job")).isEmpty();
            advance(Duration.ofSeconds(60));
            assertThat(paused.isValid()).as("its deadline passed on the ticker").isFalse();
            Lease taker = elsewhere.tryAcquire("job").orElseThrow();
            assertThat(taker.token()).isGreaterThan(paused.token());
            assertThatThrownBy(paused::renew)
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("'job'");
            paused.close();
            assertThat(locks.status("job").holders())
                    .singleElement()
                    .satisfies(
                            h -> assertThat(h.ownerId()).hasValue(taker.owner().id()));
            taker.renew();
            assertThat(taker.isValid()).isTrue();
            taker.close();
        } finally {
            elsewhere.close();
        }
    }

    @Test
    void lostRepliesHidingSuccess_areVerifiedNotTrusted() throws Exception {
        DirLockDir.lostReply = to -> true; // every rename "fails" with ENOENT after succeeding
        try {
            Lease ex = locks.tryAcquire("job").orElseThrow();
            ex.renew();
            assertThat(locks.status("job").holders())
                    .singleElement()
                    .satisfies(h -> assertThat(h.token()).hasValue(ex.token()));
            ex.close();
            assertThat(locks.status("job").isFree()).isTrue();
            Lease sh = locks.tryAcquire("job", Mode.SHARED).orElseThrow();
            sh.renew();
            sh.close();
            try (Lease again = locks.tryAcquire("job").orElseThrow()) {
                assertThat(again.token()).isGreaterThan(sh.token());
            }
        } finally {
            DirLockDir.lostReply = null;
        }
    }

    @Test
    void writerWaitingForReaders_keepsItsGateAlive_andIsNotJudgedStale() throws Exception {
        Duration lease = Duration.ofSeconds(8);
        LockSpace writerSpace = Interlock.builder("dir:" + dir)
                .ticker(now::get)
                .defaultLease(lease)
                .open();
        LockSpace observer = Interlock.builder("dir:" + dir)
                .ticker(now::get)
                .defaultLease(lease)
                .open();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            Lease reader = locks.lock("job").mode(Mode.SHARED).lease(lease).acquire(Duration.ZERO);
            java.util.concurrent.Future<Lease> writer =
                    pool.submit(() -> writerSpace.acquire("job", Duration.ofHours(1)));
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> gate("job").startsWith("X."));
            for (int step = 0; step < 6; step++) {
                String before = gate("job");
                advance(Duration.ofSeconds(
                        3)); // more than a third of the lease: the waiting writer must renew its gate
                reader.renew();
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> !gate("job").equals(before));
                assertThat(observer.tryAcquire("job"))
                        .as("step %d: the draining writer is alive", step)
                        .isEmpty();
                assertThat(writer.isDone()).isFalse();
            }
            reader.close();
            try (Lease w = writer.get(10, TimeUnit.SECONDS)) {
                assertThat(w.token()).isGreaterThan(reader.token());
            }
        } finally {
            pool.shutdownNow();
            writerSpace.close();
            observer.close();
        }
    }

    @Test
    void writerTimingOutWhileReadersDrain_handsTheGateBack() throws Exception {
        try (LockSpace real = Interlock.open("dir:" + dir)) {
            Lease reader = real.tryAcquire("job", Mode.SHARED).orElseThrow();
            assertThatThrownBy(() -> real.acquire("job", Duration.ofMillis(200)))
                    .isInstanceOf(dev.interlock.LockTimeoutException.class)
                    .hasMessageContaining("SH by " + reader.owner().id());
            assertThat(gate("job")).startsWith("F.");
            try (Lease second = real.tryAcquire("job", Mode.SHARED).orElseThrow()) {
                assertThat(second.token())
                        .isGreaterThan(reader.token() + 1); // the writer's token was used, never granted
            }
            reader.close();
            real.tryAcquire("job").orElseThrow().close();
        }
    }

    @Test
    void breakLock_removesOnlyTheNamedOwner() throws Exception {
        LockSpace elsewhere = Interlock.builder("dir:" + dir).ticker(now::get).open();
        try {
            Lease held = elsewhere.tryAcquire("job").orElseThrow();
            assertThat(locks.breakLock("job", "nobody:1:1:00")).isFalse();
            assertThat(locks.breakLock("job", held.owner().id())).isTrue();
            assertThat(locks.breakLock("job", held.owner().id()))
                    .as("already broken")
                    .isFalse();
            try (Lease mine = locks.tryAcquire("job").orElseThrow()) {
                assertThatThrownBy(held::renew).isInstanceOf(LockLostException.class);
                held.close();
                assertThat(locks.status("job").holders())
                        .singleElement()
                        .satisfies(h ->
                                assertThat(h.ownerId()).hasValue(mine.owner().id()));
            }
            Lease reader = elsewhere.tryAcquire("shared", Mode.SHARED).orElseThrow();
            assertThat(locks.breakLock("shared", reader.owner().id())).isTrue();
            assertThat(locks.status("shared").isFree()).isTrue();
            assertThatThrownBy(reader::renew).isInstanceOf(LockLostException.class);
            reader.close();
        } finally {
            elsewhere.close();
        }
    }

    @Test
    void waiters_areServedInArrivalOrder() throws Exception {
        Optional<Lease> first = locks.tryAcquire("fifo");
        Lease held = first.orElseThrow();
        // A wall clock that moves a second per reading makes arrival times distinct.
        AtomicLong wall = new AtomicLong(1_700_000_000_000L);
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> threads = new java.util.ArrayList<>();
        List<LockSpace> spaces = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                Clock c = dev.interlock.testkit.FakeClock.from(() -> Instant.ofEpochMilli(wall.addAndGet(1000)));
                LockSpace s = Interlock.builder("dir:" + dir).clock(c).open();
                spaces.add(s);
                String id = "w" + i;
                Mode mode = i == 2 ? Mode.SHARED : Mode.EXCLUSIVE;
                Thread th = new Thread(() -> {
                    try (Lease l = s.acquire("fifo", mode, Duration.ofSeconds(60))) {
                        order.add(id);
                    } catch (Exception e) {
                        order.add(id + " failed: " + e);
                    }
                });
                th.start();
                threads.add(th);
                int queued = i + 1;
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> locks.status("fifo").waiters() == queued);
            }
            held.close();
            for (Thread th : threads) {
                th.join(20_000);
            }
            assertThat(order).containsExactly("w0", "w1", "w2", "w3");
        } finally {
            spaces.forEach(LockSpace::close);
        }
    }
}
