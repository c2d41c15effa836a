package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.SemaphoreChecker;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Permits of {@code dir:} held by real processes: K processes on N permits (the testkit's checker
 * proves at most N inside and tokens in grant order), a holder killed with -9 (its permit frees at
 * once on this host), a holder stopped with SIGSTOP (alive, so its permit is kept for its whole
 * lease, then goes to the next).
 */
class DirSemaphoreProcessTest {
    @TempDir
    Path tmp;

    private final List<Process> procs = new ArrayList<>();

    @AfterEach
    void killAll() throws Exception {
        for (Process p : procs) {
            signal("CONT", p); // a stopped JVM would not die of SIGKILL before it is continued on some kernels
            p.destroyForcibly().waitFor();
        }
    }

    private Path locks() throws Exception {
        return Files.createDirectories(tmp.resolve("locks"));
    }

    /** A child that holds one permit of {@code limit} of {@code name}; returns once it holds it. */
    private Process permitHolder(Path root, String name, int limit, long leaseMs) throws Exception {
        Process p = ChildJvm.builder(
                        DirTestWorker.class,
                        List.of(),
                        "permit",
                        "dir:" + root,
                        name,
                        Integer.toString(limit),
                        Long.toString(leaseMs))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        procs.add(p);
        DirFaultTest.readHeld(p);
        return p;
    }

    private static void signal(String sig, Process p) throws Exception {
        new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).start().waitFor();
    }

    private static Optional<Lease> tryPermit(LockSpace s, String name, int limit) {
        return s.lock(name).limit(limit).tryAcquire();
    }

    @Test
    void fiveProcesses_onASemaphoreOfTwo_neverMoreThanTwoInside_tokensInGrantOrder() throws Exception {
        List<SemaphoreChecker.Held> held = SemaphoreChecker.run("dir:" + locks(), "imports", 2, 5, 40, tmp);
        assertThat(held).hasSize(200);
    }

    @Test
    void permitHolderKilled_itsPermitFreesAtOnce_andNobodyGetsOneBeyondN() throws Exception {
        Path root = locks();
        Process p = permitHolder(root, "gpu", 2, 600_000);
        try (LockSpace s = Interlock.open("dir:" + root);
                Lease mine = tryPermit(s, "gpu", 2).orElseThrow()) {
            assertThat(tryPermit(s, "gpu", 2)).as("both permits held").isEmpty();
            p.destroyForcibly().waitFor();
            assertThat(Files.list(root.resolve("gpu")).map(f -> f.getFileName().toString()))
                    .as("the killed holder left its permit")
                    .anySatisfy(n -> assertThat(n).startsWith("P."));
            Lease freed = tryPermit(s, "gpu", 2)
                    .orElseThrow(() -> new AssertionError("the dead holder's permit did not free at once"));
            assertThat(freed.token()).isGreaterThan(mine.token());
            assertThat(tryPermit(s, "gpu", 2)).as("still no more than 2").isEmpty();
            assertThat(s.status("gpu").holders()).hasSize(2);
            freed.close();
        }
    }

    @Test
    void permitHolderStopped_keepsItsPermitForItsWholeLease_thenTheNextGetsIt() throws Exception {
        Path root = locks();
        long leaseMs = 3_000;
        Process p = permitHolder(root, "backup", 1, leaseMs);
        try (LockSpace s = Interlock.open("dir:" + root)) {
            signal("STOP", p);
            long stopped = System.nanoTime();
            Lease next = Awaitility.await()
                    .atMost(Timing.seconds(60))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> tryPermit(s, "backup", 1), Optional::isPresent)
                    .orElseThrow();
            Duration waited = Duration.ofNanos(System.nanoTime() - stopped);
            assertThat(waited)
                    .as("a stopped holder is alive: its permit is not handed out while its lease lasts")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(leaseMs));
            assertThat(s.status("backup").holders())
                    .singleElement()
                    .satisfies(
                            h -> assertThat(h.ownerId()).hasValue(next.owner().id()));
            next.close();
        }
    }
}
