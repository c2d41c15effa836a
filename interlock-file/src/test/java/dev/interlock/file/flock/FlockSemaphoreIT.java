package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.SemaphoreChecker;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Semaphores on {@code flock:} across processes: K processes on N permits, and a holder killed
 * (its permit frees at once, as the kernel frees its lock) or stopped (it keeps its permit).
 */
class FlockSemaphoreIT {
    @TempDir
    Path dir;

    @TempDir
    Path work;

    private LockSpace locks;
    private ExecutorService pool;
    private final List<Process> children = new ArrayList<>();

    @BeforeEach
    void open() {
        locks = Interlock.open("flock:" + dir);
        pool = Executors.newCachedThreadPool();
    }

    @AfterEach
    void close() {
        for (Process p : children) {
            p.destroyForcibly();
        }
        pool.shutdownNow();
        locks.close();
    }

    @Test
    void fiveProcesses_onASemaphoreOfTwo_neverMoreThanTwoInside_tokensInGrantOrder() throws Exception {
        List<SemaphoreChecker.Held> held = SemaphoreChecker.run("flock:" + dir, "imports", 2, 5, 40, work);
        assertThat(held).hasSize(200);
    }

    /** A child process that holds one permit of {@code limit} on {@code name}; returns once it holds it. */
    private Process permitHolder(String name, int limit) throws Exception {
        Process p = ChildJvm.start(FlockHolder.class, "flock:" + dir, name, "EXCLUSIVE", Integer.toString(limit));
        children.add(p);
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertThat(r.readLine()).as("child holds a permit").startsWith("HELD ");
        return p;
    }

    @Test
    void aKilledHolder_sPermit_goesToTheWaitingProcessAtOnce_andNeverMoreThanN() throws Exception {
        Process first = permitHolder("gpu", 2);
        Process second = permitHolder("gpu", 2);
        // A lease far longer than the test: the permit can only come back because the kernel freed it.
        Future<Lease> waiter = pool.submit(
                () -> locks.lock("gpu").limit(2).lease(Duration.ofHours(1)).acquire(Timing.seconds(60)));
        org.awaitility.Awaitility.await()
                .atMost(Timing.seconds(10))
                .until(() -> locks.status("gpu").waiters() >= 1);
        assertThat(waiter.isDone()).isFalse();
        long killed = System.nanoTime();
        first.destroyForcibly(); // SIGKILL: no release runs, the kernel drops its locks
        Lease got = waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        Duration handOff = Duration.ofNanos(System.nanoTime() - killed);
        System.out.println("flock: permit of a killed holder handed to the waiter in " + handOff.toMillis() + " ms");
        try (LockSpace other = Interlock.open("flock:" + dir)) {
            assertThat(other.lock("gpu").limit(2).tryAcquire())
                    .as("the survivor and the waiter hold both permits")
                    .isEmpty();
            LockInfo info = other.status("gpu");
            assertThat(info.limit()).isEqualTo(2);
            assertThat(info.holders())
                    .extracting(h -> h.pid())
                    .containsExactlyInAnyOrder(
                            second.pid(), ProcessHandle.current().pid());
        }
        assertThat(handOff).as("far sooner than any lease").isLessThan(Timing.seconds(5));
        got.close();
    }

    /**
     * A waiting process keeps its place while it cannot run (stopped, as a slow scheduler would
     * leave it), and its place goes with it when it is killed: its mark on the gate is a kernel
     * lock that its descriptor carries ({@link FlockQueue}).
     */
    @Test
    void aStoppedWaiter_keepsItsPlace_aKilledOne_takesItWithIt() throws Exception {
        Lease held = locks.lock("queue").limit(1).tryAcquire().orElseThrow();
        Process waiting;
        try (Attempt first = Spaces.backend(locks)
                .attempt(AcquireSpec.builder("queue", Mode.EXCLUSIVE, Owner.newAcquisition())
                        .lease(Duration.ofMinutes(1))
                        .limit(1)
                        .waits(true)
                        .build())) {
            assertThat(first.tryAcquire())
                    .as("the permit held: the first waiter keeps the gate")
                    .isEmpty();
            waiting = ChildJvm.start(FlockHolder.class, "flock:" + dir, "queue", "EXCLUSIVE", "1");
            children.add(waiting);
            org.awaitility.Awaitility.await()
                    .atMost(Timing.seconds(30))
                    .until(() -> locks.status("queue").waiters() >= 2);
            signal("-STOP", waiting);
        }
        held.close();
        assertThat(locks.lock("queue").limit(1).tryAcquire())
                .as("the gate and the permit free, but a stopped process waits for them")
                .isEmpty();
        waiting.destroyForcibly(); // SIGKILL, stopped or not
        assertThat(waiting.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(locks.lock("queue").limit(1).tryAcquire())
                .as("the killed waiter's place went with it")
                .hasValueSatisfying(Lease::close);
    }

    private static void signal(String signal, Process p) throws Exception {
        assertThat(new ProcessBuilder("kill", signal, Long.toString(p.pid()))
                        .start()
                        .waitFor())
                .isZero();
    }

    @Test
    void aStoppedHolder_keepsItsPermit_untilItGoesOn() throws Exception {
        Process stopped = permitHolder("backup", 1);
        signal("-STOP", stopped);
        try {
            assertThat(locks.lock("backup").limit(1).tryAcquire())
                    .as("a stopped process still holds its kernel lock")
                    .isEmpty();
            assertThat(locks.status("backup").holders())
                    .singleElement()
                    .satisfies(h -> assertThat(h.pid()).isEqualTo(stopped.pid()));
        } finally {
            signal("-CONT", stopped);
        }
        stopped.getOutputStream().close(); // it releases and exits
        assertThat(stopped.waitFor(30, TimeUnit.SECONDS)).isTrue();
        locks.lock("backup").limit(1).tryAcquire().orElseThrow().close();
    }
}
