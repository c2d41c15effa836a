package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Races for permits (docs/dir-protocol.md, 4.8), on an injected monotonic ticker: a contender that
 * took its token but has not created its entry yet is invisible to the others, so only the
 * listing made after its own entry exists may grant; and a permit held on another host that
 * stopped renewing is kept for a whole unrenewed lease, then any number of contenders that judge
 * it stale at once reuse it exactly once, beside a live permit that stays held.
 */
class DirPermitRaceTest {
    private static final String OTHER_BOOT = "feedfacefeedfacefeedfacefeedface";
    private static final int CONTENDERS = 8;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<LockSpace> spaces = new ArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(CONTENDERS);

    @AfterEach
    void close() {
        DirFaults.onStep = null;
        pool.shutdownNow();
        spaces.forEach(LockSpace::close);
    }

    /** A space as another process on this host would open it, on the test's ticker. */
    private LockSpace open() {
        LockSpace s = Interlock.builder("dir:" + dir)
                .ticker(now::get)
                .defaultLease(Duration.ofSeconds(60))
                .open();
        spaces.add(s);
        return s;
    }

    /** Leaves the permit of a holder on another host that stopped renewing (lease 10 s); returns its token. */
    private long plantStalePermit(String name, int limit) throws Exception {
        open().lock(name).limit(limit).tryAcquire().orElseThrow().close();
        Path lockDir = dir.resolve(DirNames.encode(name));
        String free;
        try (Stream<Path> s = Files.list(lockDir)) {
            free = s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("F."))
                    .findFirst()
                    .orElseThrow();
        }
        DirEntries.Gate g = DirEntries.Gate.parse(free).orElseThrow();
        long t = g.token() + 1;
        DirEntries.Holder other = new DirEntries.Holder(
                10_000,
                Instant.now().getEpochSecond(),
                ProcessHandle.current().pid(),
                1,
                DirSelf.pidNamespace(),
                OTHER_BOOT,
                "abcdef0123456789",
                "other-host");
        Files.createFile(lockDir.resolve(DirEntries.Beat.name(t, 0, other)));
        Files.createFile(lockDir.resolve(DirEntries.Permit.name(t, limit, other)));
        Files.move(lockDir.resolve(free), lockDir.resolve(DirEntries.Gate.free(t, g.lastWriter(), g.nonce())));
        return t;
    }

    @Test
    void aContenderHeldBetweenItsTokenAndItsEntry_isNotGrantedBesideTheOneThatPassedIt() throws Exception {
        LockSpace first = open();
        LockSpace second = open();
        first.lock("gpu").limit(1).tryAcquire().orElseThrow().close(); // the lock directory exists
        CountDownLatch tookToken = new CountDownLatch(1);
        CountDownLatch passed = new CountDownLatch(1);
        DirFaults.onStep = step -> {
            if (step.equals("P1") && Thread.currentThread().getName().startsWith("pool-")) {
                tookToken.countDown();
                try {
                    passed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        // The first contender saw a free permit, took its token, and is held before its entry exists.
        Future<Optional<Lease>> held =
                pool.submit(() -> first.lock("gpu").limit(1).tryAcquire());
        assertThat(tookToken.await(30, TimeUnit.SECONDS)).isTrue();
        // The second sees no permit entry at all, and gets the permit.
        Lease winner = second.lock("gpu").limit(1).tryAcquire().orElseThrow();
        passed.countDown();
        assertThat(held.get(30, TimeUnit.SECONDS))
                .as("its listing, made after its entry exists, shows the other permit: not granted")
                .isEmpty();
        assertThat(second.status("gpu").holders())
                .singleElement()
                .satisfies(h -> assertThat(h.token()).hasValue(winner.token()));
        winner.close();
    }

    @Test
    void aContenderHeldAfterItsToken_whileALaterTokenIsGrantedAndReleased_getsAGreaterToken() throws Exception {
        LockSpace first = open();
        LockSpace second = open();
        first.lock("gpu").limit(2).tryAcquire().orElseThrow().close(); // the lock directory exists
        CountDownLatch tookToken = new CountDownLatch(1);
        CountDownLatch passed = new CountDownLatch(1);
        DirFaults.onStep = step -> {
            if (step.equals("P1") && Thread.currentThread().getName().startsWith("pool-")) {
                tookToken.countDown();
                try {
                    passed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Future<Optional<Lease>> held =
                pool.submit(() -> first.lock("gpu").limit(2).tryAcquire());
        assertThat(tookToken.await(30, TimeUnit.SECONDS)).isTrue();
        // A later token is granted and released while the first contender is held with its smaller one.
        long later;
        try (Lease l = second.lock("gpu").limit(2).tryAcquire().orElseThrow()) {
            later = l.token();
        }
        passed.countDown();
        Lease got = held.get(30, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("a permit was free"));
        assertThat(got.token())
                .as("a permit's token is greater than every earlier grant of the name")
                .isGreaterThan(later);
        got.close();
    }

    @Test
    void breakingAPermitHolder_freesItsPermitOnly() throws Exception {
        LockSpace a = open();
        LockSpace b = open();
        Lease broken = a.lock("gpu").limit(2).tryAcquire().orElseThrow();
        Lease kept = b.lock("gpu").limit(2).tryAcquire().orElseThrow();
        assertThat(b.breakLock("gpu", broken.owner().id())).isTrue();
        assertThat(b.status("gpu").holders())
                .singleElement()
                .satisfies(h -> assertThat(h.token()).hasValue(kept.token()));
        Lease next = b.lock("gpu").limit(2).tryAcquire().orElseThrow();
        assertThat(next.token()).isGreaterThan(kept.token());
        next.close();
        kept.close();
        broken.close();
    }

    @Test
    void aStalePermit_judgedByManyAtOnce_isReusedExactlyOnce_andTheLiveOneStays() throws Exception {
        long stale = plantStalePermit("gpu", 2);
        Lease live = open().lock("gpu").limit(2).tryAcquire().orElseThrow();
        assertThat(live.token()).isGreaterThan(stale);
        List<LockSpace> contenders = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            LockSpace s = open();
            assertThat(s.lock("gpu").limit(2).tryAcquire())
                    .as("first sight: both permits held")
                    .isEmpty();
            contenders.add(s);
        }
        now.addAndGet(Duration.ofMillis(9_999).toNanos());
        assertThat(contenders.get(0).lock("gpu").limit(2).tryAcquire())
                .as("lease not over yet")
                .isEmpty();
        now.addAndGet(Duration.ofMillis(1).toNanos());
        // Every contender has now seen the stale permit unrenewed for its whole lease: all try at once.
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Optional<Lease>>> tries = new ArrayList<>();
        for (LockSpace s : contenders) {
            tries.add(pool.submit(() -> {
                go.await();
                return s.lock("gpu").limit(2).tryAcquire();
            }));
        }
        go.countDown();
        List<Lease> won = new ArrayList<>();
        for (Future<Optional<Lease>> f : tries) {
            f.get(30, TimeUnit.SECONDS).ifPresent(won::add);
        }
        assertThat(won).as("exactly one reuses the stale permit").hasSize(1);
        assertThat(won.get(0).token()).isGreaterThan(live.token());
        assertThat(contenders.get(0).status("gpu").holders())
                .extracting(h -> h.token().orElseThrow())
                .containsExactlyInAnyOrder(live.token(), won.get(0).token());
        assertThat(live.isValid()).isTrue();
        won.get(0).close();
        live.close();
    }
}
