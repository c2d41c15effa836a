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
 * A permit held on another host that stopped renewing, on an injected monotonic ticker: it is
 * kept for a whole unrenewed lease, then any number of contenders that judge it stale at once
 * reuse it exactly once (docs/dir-protocol.md, 4.8), beside a live permit that stays held.
 */
class DirPermitStaleTest {
    private static final String OTHER_BOOT = "feedfacefeedfacefeedfacefeedface";
    private static final int CONTENDERS = 8;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<LockSpace> spaces = new ArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(CONTENDERS);

    @AfterEach
    void close() {
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
