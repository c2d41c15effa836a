package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * {@code run --limit N} and the semaphore in {@code status}/{@code list}, in-process on
 * {@code mem:}: the permits this test holds are the "others" that run the command.
 */
class SemaphoreCommandTest {
    @TempDir
    Path tmp;

    final String ns = "cli-" + UUID.randomUUID();
    final String backend = "mem:" + ns;
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    LockSpace locks;

    @BeforeEach
    void open() {
        locks = Interlock.open(backend);
    }

    @AfterEach
    void close() {
        locks.close();
        MemoryBackend.forget(ns);
    }

    int run(String... args) throws IOException {
        out = new StringWriter();
        err = new StringWriter();
        Path home = Files.createDirectories(tmp.resolve("home"));
        CommandLine cmd = Main.commandLine(new Env(new HashMap<>(), home, Env.currentUid(), tmp), null);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        return cmd.execute(args);
    }

    /** A permit of {@code limit} on {@code name}, waited for on another thread (up to a minute). */
    static CompletableFuture<Lease> waitForPermit(LockSpace space, String name, int limit) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return space.lock(name).limit(limit).acquire(Duration.ofSeconds(60));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void run_limit_runsWhileFewerThanNOthersHoldIt_andIsBusyWhenNDo() throws Exception {
        Path ran = tmp.resolve("ran");
        try (Lease first = locks.lock("imports").limit(2).tryAcquire().orElseThrow()) {
            assertThat(run("run", "--backend", backend, "--limit", "2", "-n", "imports", "--", "touch", ran.toString()))
                    .as(err.toString())
                    .isZero();
            assertThat(ran).exists();
            try (Lease second = locks.lock("imports").limit(2).tryAcquire().orElseThrow()) {
                assertThat(run("run", "--backend", backend, "--limit", "2", "-n", "imports", "--", "true"))
                        .isEqualTo(1);
                assertThat(err.toString())
                        .contains("'imports' has all 2 permits taken: held by ")
                        .contains(first.owner().id() + " (pid ")
                        .contains("token " + first.token())
                        .contains(second.owner().id() + " (pid ")
                        .contains("token " + second.token())
                        .doesNotContain("EX");
            }
        }
    }

    @Test
    void run_limit_busyAndGaveUp_listEveryPermitHolderAndTheWaiters() throws Exception {
        try (Lease a = locks.lock("imports").limit(2).tryAcquire().orElseThrow();
                Lease b = locks.lock("imports").limit(2).tryAcquire().orElseThrow();
                LockSpace other = Interlock.open(backend)) {
            CompletableFuture<Lease> waiter = waitForPermit(other, "imports", 2);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> locks.status("imports").waiters() == 1);
            assertThat(run("run", "--backend", backend, "--limit", "2", "-n", "imports", "--", "true"))
                    .isEqualTo(1);
            assertThat(err.toString())
                    .startsWith("interlock: 'imports' has all 2 permits taken: held by "
                            + a.owner().id())
                    .contains(", " + b.owner().id() + " (")
                    .contains("; 1 waiting")
                    .doesNotContain("EX");
            assertThat(run("run", "--backend", backend, "--limit", "2", "-w", "200ms", "imports", "--", "true"))
                    .isEqualTo(1);
            assertThat(err.toString())
                    .contains("interlock: gave up: " + backend + " - 'imports' (a permit of 2) not acquired after ")
                    .contains("(all 2 permits taken: held by " + a.owner().id())
                    .contains("token " + b.token())
                    .doesNotContain("EX");
            a.close();
            waiter.get(10, TimeUnit.SECONDS).close();
        }
    }

    @Test
    void run_limit_thatDisagreesWithTheHolders_is64_andRunsNothing() throws Exception {
        Path ran = tmp.resolve("ran");
        try (Lease held = locks.lock("imports").limit(3).tryAcquire().orElseThrow()) {
            assertThat(run("run", "--backend", backend, "--limit", "2", "imports", "--", "touch", ran.toString()))
                    .isEqualTo(64);
            assertThat(err.toString())
                    .contains("is held as a semaphore of 3 but a semaphore of 2 was asked")
                    .doesNotContain("Exception");
            assertThat(run("run", "--backend", backend, "-n", "imports", "--", "touch", ran.toString()))
                    .isEqualTo(64);
            assertThat(err.toString()).contains("a plain lock was asked");
        }
        assertThat(ran).doesNotExist();
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "10001", "99999999999", "x", "2.5", ""})
    void run_badLimit_is64_andSaysTheRange(String bad) throws Exception {
        assertThat(run("run", "--backend", backend, "--limit", bad, "imports", "--", "true"))
                .isEqualTo(64);
        assertThat(err.toString()).contains("1-10000").contains("'--limit'").doesNotContain("Exception");
    }

    @Test
    void run_limit_onABackendWithoutSemaphores_is69_andRunsNothing() throws Exception {
        Path ran = tmp.resolve("ran");
        assertThat(run("run", "--backend", "broken:unusable", "--limit", "2", "imports", "--", "touch", ran.toString()))
                .isEqualTo(69);
        assertThat(err.toString()).contains("semaphores (--limit) are not supported by broken:unusable yet");
        assertThat(ran).doesNotExist();
    }

    /** flock: has semaphores of its own (kernel locks on slot files): run --limit there as on mem:. */
    @Test
    void run_limit_onFlock_runsBesideOnePermit_isBusyBesideTwo_andRefusesAnotherLimit() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("flock-locks"));
        String flock = "flock:" + dir;
        Path ran = tmp.resolve("ran");
        try (LockSpace space = Interlock.open(flock);
                Lease first = space.lock("imports").limit(2).tryAcquire().orElseThrow()) {
            assertThat(run("run", "--backend", flock, "--limit", "2", "-n", "imports", "--", "touch", ran.toString()))
                    .as(err.toString())
                    .isZero();
            assertThat(ran).exists();
            assertThat(run("run", "--backend", flock, "--limit", "3", "imports", "--", "true"))
                    .isEqualTo(64);
            assertThat(err.toString()).contains("is held as a semaphore of 2 but a semaphore of 3 was asked");
            try (Lease second = space.lock("imports").limit(2).tryAcquire().orElseThrow()) {
                assertThat(run("run", "--backend", flock, "--limit", "2", "-n", "imports", "--", "true"))
                        .isEqualTo(1);
                assertThat(err.toString())
                        .contains("'imports' has all 2 permits taken")
                        .contains(second.owner().id());
                assertThat(run("status", "--backend", flock, "imports")).isZero();
                assertThat(out.toString())
                        .contains("permit/2")
                        .contains(first.owner().id())
                        .contains(String.valueOf(second.token()));
            }
        }
    }

    @Test
    void run_limitWithShared_is64() throws Exception {
        assertThat(run("run", "--backend", backend, "--limit", "2", "-s", "imports", "--", "true"))
                .isEqualTo(64);
        assertThat(err.toString()).contains("--limit and -s/--shared exclude each other");
    }

    @Test
    void status_andList_showTheLimitAndEachHolder() throws Exception {
        try (Lease a = locks.lock("gpu").limit(8).tryAcquire().orElseThrow();
                Lease b = locks.lock("gpu").limit(8).tryAcquire().orElseThrow()) {
            assertThat(run("status", "--backend", backend, "gpu")).isZero();
            assertThat(out.toString())
                    .contains("permit/8")
                    .contains(a.owner().id())
                    .contains(b.owner().id())
                    .contains(String.valueOf(a.token()))
                    .contains(String.valueOf(b.token()));
            assertThat(run("list", "--backend", backend, "--json")).isZero();
            assertThat(out.toString())
                    .contains("\"name\":\"gpu\",\"free\":false,\"limit\":8,")
                    .contains("\"owner\":\"" + a.owner().id() + "\"")
                    .contains("\"token\":" + b.token());
        }
        assertThat(run("status", "--backend", backend, "--json", "gpu")).isZero();
        assertThat(out.toString()).contains("\"limit\":null");
    }

    @Test
    void status_showsTheWaitersForAPermit() throws Exception {
        try (Lease held = locks.lock("one").limit(1).tryAcquire().orElseThrow();
                LockSpace other = Interlock.open(backend)) {
            CompletableFuture<Lease> waiter = waitForPermit(other, "one", 1);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> locks.status("one").waiters() == 1);
            assertThat(run("status", "--backend", backend, "one")).isZero();
            assertThat(out.toString()).contains("permit/1").contains("waits permit/1");
            held.close();
            waiter.get(10, TimeUnit.SECONDS).close();
        }
    }
}
