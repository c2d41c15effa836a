package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock run} on a lease-based backend ({@code dir:}): the lease dies with the JVM, so
 * the sentinel must stop the command; a broken lock must stop it too. Skipped while no
 * lease-based backend is on the class path.
 */
class LeaseBackendProcessTest {
    @TempDir
    Path tmp;

    String backend;
    Path work;
    final List<CliProcess> clis = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        assumeTrue(Interlock.availableSchemes().containsKey("dir"), "the dir: backend is not on the class path");
        backend = "dir:" + Files.createDirectory(tmp.resolve("locks"));
        work = Files.createDirectory(tmp.resolve("work"));
    }

    @AfterEach
    void tearDown() {
        clis.forEach(CliProcess::close);
    }

    CliProcess cli(List<String> jvmArgs, String... args) throws IOException {
        CliProcess p = CliProcess.start(jvmArgs, Map.of(), args);
        clis.add(p);
        return p;
    }

    void awaitPid(Path file, CliProcess p) {
        await().atMost(Timing.seconds(20)).until(() -> {
            if (!p.process.isAlive() && !Files.exists(file)) {
                throw new AssertionError("interlock exited " + p.process.exitValue() + ": " + p.err());
            }
            return Files.exists(file) && Files.size(file) > 0;
        });
    }

    @Test
    void sigkillOfInterlock_theSentinelStopsTheCommand() throws Exception {
        Path pid = work.resolve("child.pid");
        CliProcess p = cli(
                List.of("-Dinterlock.cli.killGraceMs=1000"),
                "run",
                "--backend",
                backend,
                "--lease",
                "3s",
                "x",
                "--",
                "sh",
                "-c",
                "sleep 60 & echo $$ > " + pid + "; wait");
        awaitPid(pid, p);
        long shell = Long.parseLong(Files.readString(pid).trim());
        p.process.toHandle().destroyForcibly();
        assertThat(p.process.waitFor(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        await().atMost(Timing.seconds(10)).until(() -> !RunProcessTest.running(shell));
    }

    @Test
    void brokenLock_stopsTheCommand_exit75() throws Exception {
        Path pid = work.resolve("child.pid");
        CliProcess p = cli(
                List.of(),
                "run",
                "--backend",
                backend,
                "--lease",
                "1500ms",
                "x",
                "--",
                "sh",
                "-c",
                "sleep 60 & echo $$ > " + pid + "; wait");
        awaitPid(pid, p);
        long shell = Long.parseLong(Files.readString(pid).trim());
        CliProcess status = cli(List.of(), "status", "--json", "--backend", backend, "x");
        assertThat(status.exitCode()).isEqualTo(0);
        Matcher owner = Pattern.compile("\"owner\":\"([^\"]+)\"").matcher(status.out());
        assertThat(owner.find()).as(status.out()).isTrue();
        CliProcess broken = cli(List.of(), "break", "--backend", backend, "x", "--owner", owner.group(1));
        assertThat(broken.exitCode()).as(broken.err()).isEqualTo(0);
        assertThat(broken.out()).contains("removed 'x'");
        assertThat(p.exitCode()).isEqualTo(75);
        assertThat(p.err()).contains("lost").contains("stopping the command");
        await().atMost(Timing.seconds(10)).until(() -> !RunProcessTest.running(shell));
        CliProcess again = cli(List.of(), "break", "--backend", backend, "x", "--owner", owner.group(1));
        assertThat(again.exitCode()).isEqualTo(1);
    }

    /**
     * The sentinel's timer must not come from the caller's PATH: as root, a {@code sleep} planted
     * earlier in PATH would run as root. The planted one leaves a mark; the test waits until the
     * sentinel's timer (a {@code sleep} in the command's process group) runs, then looks for it.
     */
    @Test
    void sentinelTimer_plantedSleepInPath_neverRuns() throws Exception {
        Path plant = Files.createDirectory(tmp.resolve("plant"));
        Path mark = work.resolve("planted-sleep-ran");
        Path fake = plant.resolve("sleep");
        Files.writeString(fake, "#!/bin/sh\necho ran > " + mark + "\nexec /bin/sleep \"$@\"\n");
        fake.toFile().setExecutable(true, false);
        runUntilTheTimerRuns(plant + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        assertThat(mark).doesNotExist();
    }

    /** Without sleep in PATH, the timer must still run (it used to fail at once and stop the command). */
    @Test
    void sentinelTimer_noSleepInPath_commandRuns() throws Exception {
        runUntilTheTimerRuns(tmp.resolve("nothing-here").toString());
    }

    /** Runs a holder with {@code path} as PATH, waits until its sentinel's timer runs, releases it: exit 0. */
    private void runUntilTheTimerRuns(String path) throws Exception {
        Path pid = work.resolve("child.pid");
        CliProcess p = CliProcess.start(
                List.of(),
                Map.of("PATH", path),
                "run",
                "--backend",
                backend,
                "--lease",
                "30s",
                "x",
                "--",
                "/bin/sh",
                "-c",
                "echo $$ > " + pid + "; read line");
        clis.add(p);
        awaitPid(pid, p);
        long group = groupOf(Long.parseLong(Files.readString(pid).trim()));
        await().atMost(Timing.seconds(20)).until(() -> {
            if (!p.process.isAlive()) {
                throw new AssertionError("interlock exited " + p.process.exitValue() + ": " + p.err());
            }
            return sleepRunsIn(group);
        });
        p.process.getOutputStream().write('\n');
        p.process.getOutputStream().close();
        assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
    }

    /**
     * After interlock is killed, a waiter on the same host gets the lock as soon as nothing of the
     * command is left, not when the sentinel's grace period (10s for a 100s lease) is over: the
     * sentinel used to live on for all of it, and the lock is held on its behalf. The waiter runs
     * in this JVM and times its own acquisition; when it gets in, no process of the group may run.
     */
    @Test
    void sigkillOfInterlock_sameHostWaiterGetsTheLockOnceTheCommandIsGone() throws Exception {
        Path pids = work.resolve("command.pids");
        CliProcess holder = cli(
                List.of(),
                "run",
                "--backend",
                backend,
                "--lease",
                "100s",
                "x",
                "--",
                "sh",
                "-c",
                "sleep 600 & echo $$ $! > " + pids + "; wait");
        awaitPid(pids, holder);
        String[] both = Files.readString(pids).trim().split(" ");
        long shell = Long.parseLong(both[0]);
        long child = Long.parseLong(both[1]);
        long group = groupOf(shell);
        try (LockSpace space = Interlock.open(backend)) {
            assertThat(space.lock("x").tryAcquire())
                    .as("the holder has the lock")
                    .isEmpty();
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                try (Lease lease = space.lock("x").acquire(Timing.seconds(60))) {
                    long at = System.nanoTime();
                    assertThat(processesIn(group))
                            .as("processes of the command's group running when the waiter got in")
                            .isEmpty();
                    return at;
                } catch (InterruptedException | IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            holder.process.toHandle().destroyForcibly();
            assertThat(holder.process.waitFor(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            // The sentinel's SIGTERM ends both at once; from then on nothing of the command runs.
            await().atMost(Timing.seconds(20))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> !RunProcessTest.running(shell) && !RunProcessTest.running(child));
            long commandGone = System.nanoTime();
            long acquired = waiter.get(60, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(acquired - commandGone))
                    .as("from the command's end to the waiter's acquisition")
                    .isLessThan(Timing.seconds(1));
        }
    }

    /** Processes of group {@code group} that can still run (zombies do not count), as "pid comm". */
    private static List<String> processesIn(long group) throws IOException {
        List<String> found = new ArrayList<>();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path proc : (Iterable<Path>) procs::iterator) {
                try {
                    String stat = Files.readString(proc.resolve("stat"));
                    int close = stat.lastIndexOf(')');
                    String[] fields = stat.substring(close + 2).split(" ");
                    if (Long.parseLong(fields[2]) == group && !fields[0].equals("Z")) {
                        found.add(proc.getFileName() + " " + stat.substring(stat.indexOf('(') + 1, close));
                    }
                } catch (IOException | RuntimeException e) {
                    // not a process, or gone
                }
            }
        }
        return found;
    }

    /** The process group of {@code pid} (field 5 of /proc/PID/stat). */
    private static long groupOf(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[2]);
    }

    /** True if a process named sleep runs in process group {@code group}. */
    private static boolean sleepRunsIn(long group) throws IOException {
        return processesIn(group).stream().anyMatch(p -> p.endsWith(" sleep"));
    }

    /**
     * A waiter's notice, and its message when its wait ran out, used to name the waiter itself,
     * queued on its sentinel's behalf, as "a queued waiter goes first".
     */
    @Test
    void waitingNotice_namesTheHolder_notTheWaiterItself() throws Exception {
        Path pid = work.resolve("holder.pid");
        CliProcess holder =
                cli(List.of(), "run", "--backend", backend, "x", "--", "sh", "-c", "echo $$ > " + pid + "; read line");
        awaitPid(pid, holder);
        CliProcess gaveUp = cli(List.of(), "run", "--backend", backend, "--wait", "1500ms", "x", "--", "true");
        assertThat(gaveUp.exitCode()).isNotZero();
        assertThat(gaveUp.err()).contains("gave up").contains("held EX by").doesNotContain("queued waiter");
        CliProcess waiter = cli(List.of(), "run", "--backend", backend, "x", "--", "true");
        await().atMost(Timing.seconds(20)).until(() -> waiter.err().contains("waiting for 'x'"));
        assertThat(waiter.err()).contains("held EX by").doesNotContain("queued waiter");
        holder.process.getOutputStream().write('\n');
        holder.process.getOutputStream().close();
        assertThat(holder.exitCode()).as(holder.err()).isZero();
        assertThat(waiter.exitCode()).as(waiter.err()).isZero();
    }
}
