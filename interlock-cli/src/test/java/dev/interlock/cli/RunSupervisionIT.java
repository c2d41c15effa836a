package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Interlock;
import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The promise of {@code interlock run} on a lease-based backend ({@code dir:}): the command never
 * runs without the lock, whatever happens to the supervising JVM, to its sentinel or to the
 * backend under it.
 *
 * <p>Each test runs a holder whose command ignores SIGTERM and appends {@code old} lines to a log
 * every 20ms until it is killed, and a second {@code interlock run} that waits for the lock and
 * writes {@code new-start} and, a second later, {@code new-end}. Appends are atomic, so the log's
 * order is the real order: an {@code old} line between the two markers is a command that ran
 * inside another holder's section. Nothing here compares clocks or sleeps to make time pass.
 */
class RunSupervisionIT {
    /** The holders' lease: renewed every 667ms, declared lost at 1.6s, SIGKILL at 1.8s. */
    static final String LEASE = "2s";

    @TempDir
    Path tmp;

    String backend;
    Path locks;
    Path work;
    Path log;
    final List<CliProcess> clis = new ArrayList<>();
    final List<Long> toContinue = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        assumeTrue(Interlock.availableSchemes().containsKey("dir"), "the dir: backend is not on the class path");
        locks = Files.createDirectory(tmp.resolve("locks"));
        backend = "dir:" + locks;
        work = Files.createDirectory(tmp.resolve("work"));
        log = work.resolve("log");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (long pid : toContinue) {
            new ProcessBuilder("kill", "-CONT", Long.toString(pid)).start().waitFor();
        }
        clis.forEach(CliProcess::close);
    }

    CliProcess cli(List<String> prefix, List<String> jvmArgs, String... args) throws IOException {
        CliProcess p = prefix.isEmpty()
                ? CliProcess.start(jvmArgs, Map.of(), args)
                : CliProcess.startWrapped(prefix, jvmArgs, args);
        clis.add(p);
        return p;
    }

    /** A holder of 'x' whose command ignores SIGTERM and logs 'old' every 20ms; returns once it runs. */
    CliProcess stubbornHolder(List<String> prefix, String... options) throws Exception {
        Path pid = work.resolve("old.pid");
        List<String> args = new ArrayList<>(List.of("run", "--backend", backend, "--lease", LEASE));
        args.addAll(List.of(options));
        args.addAll(List.of(
                "x",
                "--",
                "sh",
                "-c",
                "trap '' TERM; echo $$ > " + pid + "; while :; do echo old >> " + log + "; sleep 0.02; done"));
        CliProcess p = cli(prefix, List.of(), args.toArray(new String[0]));
        await().atMost(Timing.seconds(20)).until(() -> {
            if (!p.process.isAlive()) {
                throw new AssertionError("the holder exited " + p.process.exitValue() + ": " + p.err());
            }
            return Files.exists(pid) && Files.size(pid) > 0 && Files.exists(log);
        });
        return p;
    }

    /** A contender for 'x' that logs its section; it is waiting once this returns (checked through status). */
    CliProcess waitingContender(String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--backend", backend, "-w", "60s"));
        args.addAll(List.of(options));
        args.addAll(List.of("x", "--", "sh", "-c", "echo new-start >> " + log + "; sleep 1; echo new-end >> " + log));
        return cli(List.of(), List.of(), args.toArray(new String[0]));
    }

    /** Asserts the contender got the lock and that no 'old' line lies inside its section. */
    void assertNoOldLineInTheNewSection(CliProcess contender) throws Exception {
        assertThat(contender.exitCode(Timing.seconds(60))).as(contender.err()).isEqualTo(0);
        List<String> lines = Files.readAllLines(log);
        int start = lines.indexOf("new-start");
        int end = lines.indexOf("new-end");
        assertThat(start).as("the contender's section began").isGreaterThanOrEqualTo(0);
        assertThat(end).isGreaterThan(start);
        List<String> inside = lines.subList(start + 1, end);
        assertThat(inside)
                .as("lines written by the old command inside the new holder's section")
                .doesNotContain("old");
    }

    static long groupOf(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[2]);
    }

    static void signal(String sig, long pid) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + sig, Long.toString(pid))
                        .start()
                        .waitFor())
                .isEqualTo(0);
    }

    long oldPid() throws IOException {
        return RunProcessTest.readPid(work.resolve("old.pid"));
    }

    @Test
    void sigkillOfInterlock_sameHostWaiterWaitsUntilTheCommandsGroupIsGone() throws Exception {
        CliProcess holder = stubbornHolder(List.of());
        long old = oldPid();
        CliProcess contender = waitingContender();
        awaitWaiting();
        holder.process.toHandle().destroyForcibly();
        assertNoOldLineInTheNewSection(contender);
        assertThat(RunProcessTest.running(old)).isFalse();
    }

    @Test
    void sigstopOfInterlock_theSentinelKillsTheCommandBeforeTheLeaseRunsOut() throws Exception {
        CliProcess holder = stubbornHolder(List.of(), "--verbose");
        long old = oldPid();
        CliProcess contender = waitingContender();
        awaitWaiting();
        toContinue.add(holder.pid());
        signal("STOP", holder.pid());
        assertNoOldLineInTheNewSection(contender);
        assertThat(RunProcessTest.running(old)).isFalse();
        signal("CONT", holder.pid());
        assertThat(holder.exitCode()).as(holder.err()).isEqualTo(75);
        // The sentinel died of its own timer's SIGKILL: that, not "was killed by signal 9", is what happened.
        assertThat(holder.err())
                .doesNotContain("was killed by signal")
                .contains("ran out and killed the command's process group");
        // Issue 25: the sentinel's own processes are not the command's leftovers, and the owner-checked
        // release of a lock that had passed to the contender changed nothing: it says so, not "released".
        assertThat(holder.err())
                .doesNotContain("COMMAND left running")
                .doesNotContain("released lost")
                .contains("nothing to release: lost 'x'");
    }

    /**
     * Issue 29: a permit holder's {@code interlock} stopped (SIGSTOP) while its command keeps
     * running: the sentinel stops the command before the permit's lease can run out, and the
     * waiter that gets the permit sees no line of the old command inside its section.
     */
    @Test
    void sigstopOfInterlock_holdingAPermit_theSentinelKillsTheCommandBeforeThePermitPasses() throws Exception {
        CliProcess steady = cli(
                List.of(),
                List.of(),
                "run",
                "--backend",
                backend,
                "--limit",
                "2",
                "x",
                "--",
                "sh",
                "-c",
                "read line; exit 0");
        await().atMost(Timing.seconds(20)).until(() -> {
            try (CliProcess status = CliProcess.start("status", "--json", "--backend", backend, "x")) {
                status.exitCode();
                return status.out().contains("\"limit\":2");
            }
        });
        CliProcess holder = stubbornHolder(List.of(), "--limit", "2");
        long old = oldPid();
        CliProcess contender = waitingContender("--limit", "2");
        awaitWaiting();
        toContinue.add(holder.pid());
        signal("STOP", holder.pid());
        assertNoOldLineInTheNewSection(contender);
        assertThat(RunProcessTest.running(old)).isFalse();
        signal("CONT", holder.pid());
        assertThat(holder.exitCode()).as(holder.err()).isEqualTo(75);
        steady.process.getOutputStream().close();
        assertThat(steady.exitCode()).as(steady.err()).isEqualTo(0);
    }

    @Test
    void renewalFailing_commandIsKilledBeforeTheLeaseRunsOut_exit75() throws Exception {
        assumeTrue(
                RunSupervisionIT.canUnshareMounts(), "needs root and util-linux unshare/nsenter for a private mount");
        // The holder sees the lock directory through its own bind mount; making that mount
        // read-only cuts the holder off (its renewals fail) while everyone else still reaches it.
        CliProcess holder = stubbornHolder(List.of(
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                "mount --bind \"$0\" \"$0\" && exec \"$@\"",
                locks.toString()));
        long old = oldPid();
        CliProcess contender = waitingContender();
        awaitWaiting();
        Process cut = new ProcessBuilder(
                        "nsenter",
                        "-t",
                        Long.toString(holder.pid()),
                        "-m",
                        "mount",
                        "-o",
                        "remount,bind,ro",
                        locks.toString(),
                        locks.toString())
                .redirectErrorStream(true)
                .start();
        assertThat(cut.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(cut.exitValue())
                .as(new String(cut.getInputStream().readAllBytes()))
                .isEqualTo(0);
        assertNoOldLineInTheNewSection(contender);
        assertThat(holder.exitCode()).as(holder.err()).isEqualTo(75);
        assertThat(holder.err()).contains("renewal kept failing").contains("SIGKILL after 200ms");
        assertThat(RunProcessTest.running(old)).isFalse();
    }

    @Test
    void sigkillOfTheSentinel_theCommandIsStopped_exit75() throws Exception {
        CliProcess holder = stubbornHolder(List.of());
        long old = oldPid();
        long sentinel = groupOf(old);
        assertThat(sentinel)
                .as("the command runs in the sentinel's group")
                .isNotEqualTo(old)
                .isNotEqualTo(holder.pid());
        CliProcess contender = waitingContender();
        awaitWaiting();
        // The lock is held on the sentinel's behalf: with it gone, the command's group still counts as the holder.
        signal("KILL", sentinel);
        assertThat(holder.exitCode()).as(holder.err()).isEqualTo(75);
        assertThat(holder.err())
                .contains("the sentinel guarding the command (pid " + sentinel + ") was killed by signal 9");
        assertThat(RunProcessTest.running(old)).isFalse();
        assertNoOldLineInTheNewSection(contender);
    }

    @Test
    void processesTheCommandLeavesBehind_areStoppedBeforeTheLockIsReleased() throws Exception {
        Path pid = work.resolve("left.pid");
        CliProcess holder = cli(
                List.of(),
                List.of(),
                "run",
                "--backend",
                backend,
                "--lease",
                LEASE,
                "x",
                "--",
                "sh",
                "-c",
                "(trap '' TERM; while :; do echo old >> " + log + "; sleep 0.02; done) & echo $! > " + pid
                        + "; read line; exit 0");
        await().atMost(Timing.seconds(20)).until(() -> Files.exists(pid) && Files.size(pid) > 0 && Files.exists(log));
        long left = RunProcessTest.readPid(pid);
        CliProcess contender = waitingContender();
        awaitWaiting();
        holder.process.getOutputStream().close(); // the command reads end of file and exits 0
        assertThat(holder.exitCode()).as(holder.err()).isEqualTo(0);
        assertThat(holder.err())
                .contains("stopping what COMMAND left running in its process group (pid")
                .contains(" " + left);
        assertThat(RunProcessTest.running(left)).isFalse();
        assertNoOldLineInTheNewSection(contender);
    }

    /** Waits until 'x' shows a queued waiter, so the contender saw the holder before the fault. */
    void awaitWaiting() {
        await().atMost(Timing.seconds(20)).until(() -> {
            try (CliProcess status = CliProcess.start("status", "--json", "--backend", backend, "x")) {
                status.exitCode();
                return status.out().matches("(?s).*\"waiters\":[1-9].*");
            }
        });
    }

    static boolean canUnshareMounts() {
        try {
            Process p = new ProcessBuilder("unshare", "-m", "--propagation", "private", "true")
                    .redirectErrorStream(true)
                    .start();
            return p.waitFor(10, TimeUnit.SECONDS)
                    && p.exitValue() == 0
                    && new ProcessBuilder("nsenter", "--version").start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }
}
