package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock run} as a real process against a {@code flock:} directory, with util-linux
 * flock(1) as the independent witness of who holds the lock.
 *
 * <p>Holders run {@code sh -c 'echo $$ > PIDFILE; read line'}: they hold the lock until the test
 * writes a line to their stdin (inherited from interlock), so nothing waits on a clock.
 */
class RunProcessTest {
    @TempDir
    Path tmp;

    Path dir;
    Path work;
    String backend;
    final List<Process> started = new ArrayList<>();
    final List<CliProcess> clis = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        dir = Files.createDirectory(tmp.resolve("locks"));
        work = Files.createDirectory(tmp.resolve("work"));
        backend = "flock:" + dir;
    }

    @AfterEach
    void tearDown() {
        clis.forEach(CliProcess::close);
        started.forEach(Process::destroyForcibly);
    }

    CliProcess cli(List<String> jvmArgs, String... args) throws IOException {
        CliProcess p = CliProcess.start(jvmArgs, Map.of(), args);
        clis.add(p);
        return p;
    }

    CliProcess cli(String... args) throws IOException {
        return cli(List.of(), args);
    }

    /** An interlock holder of {@code name} that keeps it until {@link #release}. */
    CliProcess holder(String name, String... options) throws IOException {
        Path pidFile = work.resolve(name + "-" + clis.size() + ".pid");
        List<String> args = new ArrayList<>(List.of("run", "--backend", backend));
        args.addAll(List.of(options));
        args.addAll(List.of(name, "--", "sh", "-c", "echo $$ > " + pidFile + "; read line"));
        CliProcess p = cli(args.toArray(new String[0]));
        awaitFile(pidFile, p);
        return p;
    }

    static void release(CliProcess holder) throws IOException, InterruptedException {
        OutputStream in = holder.process.getOutputStream();
        in.write('\n');
        in.close();
        assertThat(holder.exitCode()).as(holder.err()).isEqualTo(0);
    }

    void awaitFile(Path file, CliProcess p) {
        await().atMost(Timing.seconds(20)).until(() -> {
            if (!p.process.isAlive() && !Files.exists(file)) {
                throw new AssertionError(
                        "interlock exited " + p.process.exitValue() + " before " + file + " appeared: " + p.err());
            }
            return Files.exists(file) && Files.size(file) > 0;
        });
    }

    static long readPid(Path file) throws IOException {
        return Long.parseLong(Files.readString(file).trim());
    }

    /** True while {@code pid} runs (a zombie does not count: nobody may reap orphans in a container). */
    static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException e) {
            return false;
        }
    }

    /** Exit status of util-linux {@code flock -n FILE true}: 0 if the lock was free, 1 if held. */
    int flockNoWait(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("flock", "-n", file.toString(), "true")
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        return p.exitValue();
    }

    @Test
    void exitStatus_isTheCommands() throws Exception {
        assertThat(cli("run", "--backend", backend, "x", "--", "sh", "-c", "exit 42")
                        .exitCode())
                .isEqualTo(42);
    }

    @Test
    void commandKilledBySignal_is128PlusSignal() throws Exception {
        assertThat(cli("run", "--backend", backend, "x", "--", "sh", "-c", "kill -KILL $$")
                        .exitCode())
                .isEqualTo(137);
    }

    @Test
    void commandNotFound_is127_notExecutable_is126() throws Exception {
        CliProcess p = cli("run", "--backend", backend, "x", "--", "no-such-command-anywhere");
        assertThat(p.exitCode()).isEqualTo(127);
        assertThat(p.err()).contains("cannot run 'no-such-command-anywhere'").contains("not found");
        Path script = Files.writeString(work.resolve("noexec.sh"), "#!/bin/sh\necho hi\n");
        assertThat(cli("run", "--backend", backend, "x", "--", script.toString())
                        .exitCode())
                .isEqualTo(126);
    }

    @Test
    void environment_namesTheLockOwnerAndToken_andDescriptorsAreClosed() throws Exception {
        CliProcess p = cli(
                "run",
                "--backend",
                backend,
                "my.lock",
                "--",
                "sh",
                "-c",
                "echo \"$INTERLOCK_NAME|$INTERLOCK_OWNER|$INTERLOCK_TOKEN\"; exec ls -v /proc/self/fd");
        assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
        String[] lines = p.out().split("\n");
        assertThat(lines[0]).matches("my\\.lock\\|[^:|]+:" + p.pid() + ":\\d+:[0-9a-f]+\\|\\d+");
        // stdin, stdout, stderr, the lock (fd 3) and the directory ls reads: none of the JVM's descriptors
        assertThat(List.of(lines).subList(1, lines.length)).containsExactly("0", "1", "2", "3", "4");
    }

    @Test
    void noWait_whenBusy_exitsWithConflictCode_orE() throws Exception {
        CliProcess holder = holder("x");
        CliProcess busy = cli("run", "-n", "--backend", backend, "x", "--", "echo", "ran");
        assertThat(busy.exitCode()).isEqualTo(1);
        assertThat(busy.out()).isEmpty();
        assertThat(busy.err()).contains("'x' is busy (held EX by ").contains("(pid " + holder.pid() + ")");
        CliProcess quiet = cli("run", "-n", "-q", "-E", "99", "--backend", backend, "x", "--", "echo", "ran");
        assertThat(quiet.exitCode()).isEqualTo(99);
        assertThat(quiet.err()).isEmpty();
        release(holder);
        assertThat(cli("run", "-n", "--backend", backend, "x", "--", "true").exitCode())
                .isEqualTo(0);
    }

    @Test
    void wait_runsOut_exitsWithConflictCode() throws Exception {
        CliProcess holder = holder("x");
        CliProcess waiter = cli("run", "-w", "300ms", "-E", "3", "--backend", backend, "x", "--", "echo", "ran");
        assertThat(waiter.exitCode()).isEqualTo(3);
        assertThat(waiter.out()).isEmpty();
        assertThat(waiter.err()).contains("gave up").contains("not acquired after");
        release(holder);
    }

    @Test
    void wait_saysOnceWhoHoldsTheLock_thenRunsWhenReleased() throws Exception {
        CliProcess holder = holder("x");
        CliProcess waiter = cli("run", "--backend", backend, "x", "--", "echo", "ran");
        await().atMost(Timing.seconds(20)).until(() -> waiter.err().contains("waiting for 'x'"));
        assertThat(waiter.err()).contains("(held EX by ").contains("(pid " + holder.pid() + ") since ");
        release(holder);
        assertThat(waiter.exitCode()).isEqualTo(0);
        assertThat(waiter.out()).isEqualTo("ran\n");
        assertThat(waiter.err().split("waiting for", -1)).hasSize(2); // said once
    }

    @Test
    void shared_holdersShare_exclusiveConflicts() throws Exception {
        CliProcess reader = holder("x", "-s");
        assertThat(cli("run", "-s", "-n", "--backend", backend, "x", "--", "true")
                        .exitCode())
                .isEqualTo(0);
        assertThat(cli("run", "-n", "--backend", backend, "x", "--", "true").exitCode())
                .isEqualTo(1);
        release(reader);
        assertThat(cli("run", "-n", "--backend", backend, "x", "--", "true").exitCode())
                .isEqualTo(0);
    }

    @Test
    void sigterm_isForwardedToTheCommand_exit143() throws Exception {
        CliProcess holder = holder("x");
        long child = readPid(work.resolve("x-0.pid"));
        holder.process.toHandle().destroy(); // SIGTERM (Process.destroy would also close the command's stdin)
        assertThat(holder.exitCode()).isEqualTo(143);
        await().atMost(Timing.seconds(10)).until(() -> !running(child));
        assertThat(flockNoWait(dir.resolve("x"))).isEqualTo(0);
    }

    @Test
    void sigkillOfInterlock_leavesTheCommandHoldingTheLock() throws Exception {
        CliProcess holder = holder("x");
        long child = readPid(work.resolve("x-0.pid"));
        holder.process.toHandle().destroyForcibly(); // SIGKILL, keeping our end of its stdin open
        assertThat(holder.process.waitFor(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(running(child)).isTrue();
        assertThat(flockNoWait(dir.resolve("x")))
                .as("lock held by the orphaned command")
                .isEqualTo(1);
        assertThat(cli("run", "-n", "--backend", backend, "x", "--", "true").exitCode())
                .isEqualTo(1);
        OutputStream in = holder.process.getOutputStream(); // still the command's stdin
        in.write('\n');
        in.close();
        await().atMost(Timing.seconds(10)).until(() -> !running(child));
        assertThat(flockNoWait(dir.resolve("x"))).isEqualTo(0);
    }

    @Test
    void lostLock_stopsTheWholeProcessGroup_exit75() throws Exception {
        Path pid = work.resolve("lost.pid");
        Path bg = work.resolve("bg.pid");
        CliProcess p = cli(
                List.of("-Dinterlock.checkIntervalMs=200"),
                "run",
                "--backend",
                backend,
                "x",
                "--",
                "sh",
                "-c",
                "sleep 60 & echo $! > " + bg + "; echo $$ > " + pid + "; wait");
        awaitFile(pid, p);
        long shell = readPid(pid);
        long background = readPid(bg);
        Files.delete(dir.resolve("x"));
        assertThat(p.exitCode()).isEqualTo(75);
        assertThat(p.err()).contains("removed").contains("stopping the command");
        assertThat(p.err().split("was removed while held", -1))
                .as("the loss is told once: %s", p.err())
                .hasSize(2);
        await().atMost(Timing.seconds(10)).until(() -> !running(shell) && !running(background));
    }

    /**
     * Issue 26, 8: a dir: lock directory renamed under {@code run} was noticed at the next renewal
     * only (the old command ran 6.8 s into the new holder's section). On the same host the rename
     * is seen at once: with a 60 s lease (renewal after 20 s), the command is stopped within seconds.
     */
    @Test
    void dirLockDirectoryRenamed_stopsTheCommandAtOnce_notAtTheRenewal() throws Exception {
        Path pid = work.resolve("moved.pid");
        CliProcess p = cli(
                "run",
                "--backend",
                "dir:" + dir,
                "--lease",
                "60s",
                "x",
                "--",
                "sh",
                "-c",
                "echo $$ > " + pid + "; exec sleep 120");
        awaitFile(pid, p);
        long shell = readPid(pid);
        long movedAt = System.nanoTime();
        Files.move(dir.resolve("x"), tmp.resolve("x-moved-away"));
        assertThat(p.process.waitFor(Timing.seconds(15).toMillis(), TimeUnit.MILLISECONDS))
                .as("run stopped before its first renewal (20 s)")
                .isTrue();
        assertThat(java.time.Duration.ofNanos(System.nanoTime() - movedAt))
                .isLessThan(java.time.Duration.ofSeconds(15));
        assertThat(p.exitCode()).isEqualTo(75);
        assertThat(p.err())
                .contains("the lock directory " + dir.resolve("x") + " was moved or replaced")
                .contains("stopping the command");
        await().atMost(Timing.seconds(10)).until(() -> !running(shell));
    }

    @Test
    void interop_utilLinuxFlockExcludesInterlock_andViceVersa() throws Exception {
        Path ready = work.resolve("flock.pid");
        Process flock = new ProcessBuilder(
                        "flock", dir.resolve("x").toString(), "sh", "-c", "echo $$ > " + ready + "; read line")
                .start();
        started.add(flock);
        await().atMost(Timing.seconds(10)).until(() -> Files.exists(ready) && Files.size(ready) > 0);
        CliProcess busy = cli("run", "-n", "--backend", backend, "x", "--", "true");
        assertThat(busy.exitCode()).isEqualTo(1);
        assertThat(busy.err()).contains("is busy");
        flock.getOutputStream().close();
        assertThat(flock.waitFor(10, TimeUnit.SECONDS)).isTrue();

        CliProcess holder = holder("x");
        assertThat(flockNoWait(dir.resolve("x"))).isEqualTo(1);
        release(holder);
        assertThat(flockNoWait(dir.resolve("x"))).isEqualTo(0);
    }

    @Test
    void holdAtLeast_keepsTheLockAfterTheCommandEnds() throws Exception {
        long start = System.nanoTime();
        CliProcess p = cli("run", "--hold-at-least", "1500ms", "--backend", backend, "x", "--", "true");
        assertThat(p.exitCode()).isEqualTo(0);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void sentinel_stopsTheCommand_whenInterlockIsKilled() throws Exception {
        // The sentinel guards lease-based backends; forced here on flock: to test it without one.
        Path pid = work.resolve("guarded.pid");
        CliProcess p = cli(
                List.of("-Dinterlock.cli.sentinel=true", "-Dinterlock.cli.killGraceMs=1000"),
                "run",
                "--backend",
                backend,
                "x",
                "--",
                "sh",
                "-c",
                "sleep 60 & echo $$ > " + pid + "; wait");
        awaitFile(pid, p);
        long shell = readPid(pid);
        p.process.toHandle().destroyForcibly();
        await().atMost(Timing.seconds(10)).until(() -> !running(shell));
        await().atMost(Timing.seconds(10)).until(() -> flockNoWait(dir.resolve("x")) == 0);
    }

    @Test
    void commandArguments_areByteExact_underTheCLocale() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // The shell makes the non-ASCII bytes, so this test does not depend on its own JVM's locale.
        ProcessBuilder pb = new ProcessBuilder(
                        "/bin/sh",
                        "-c",
                        "exec \"$0\" -Xshare:auto -XX:TieredStopAtLevel=1 -cp \"$1\" dev.interlock.cli.Main run --backend \"$2\" x --"
                                + " printf %s \"$(printf 'h\\303\\251llo')\"",
                        java,
                        System.getProperty("java.class.path"),
                        backend)
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("LC_ALL", "C");
        pb.environment().put("LANG", "C");
        Process p = pb.start();
        started.add(p);
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(0);
        assertThat(out).isEqualTo("h\u00e9llo".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void onATerminal_theCommandGetsTheForeground_andCtrlCReachesIt() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path report = work.resolve("tty.txt");
        // util-linux script(1) gives interlock a pseudo-terminal; the command reports whether its
        // process group owns the terminal, then waits for input until Ctrl-C (sent through the tty).
        String inner = "exec '" + java + "' -Xshare:auto -XX:TieredStopAtLevel=1 -cp '"
                + System.getProperty("java.class.path")
                + "' dev.interlock.cli.Main run --backend '" + backend + "' x -- sh -c"
                + " 'echo $(ps -o pgid= -p $$) $(ps -o tpgid= -p $$) > " + report + "; read line; echo read $line'";
        Process p = new ProcessBuilder("script", "-qec", inner, "/dev/null")
                .redirectErrorStream(true)
                .start();
        started.add(p);
        await().atMost(Timing.seconds(20))
                .until(() ->
                        Files.exists(report) && Files.readString(report).trim().contains(" "));
        String[] groups = Files.readString(report).trim().split("\\s+");
        assertThat(groups[1]).as("terminal's foreground group").isEqualTo(groups[0]);
        p.getOutputStream().write(3); // Ctrl-C
        p.getOutputStream().flush();
        assertThat(p.waitFor(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(p.exitValue()).isEqualTo(130);
    }

    @Test
    void lostLock_commandIgnoringSigterm_isKilledAfterTheGracePeriod() throws Exception {
        Path pid = work.resolve("stubborn.pid");
        CliProcess p = cli(
                List.of("-Dinterlock.checkIntervalMs=200", "-Dinterlock.cli.killGraceMs=500"),
                "run",
                "--backend",
                backend,
                "x",
                "--",
                "sh",
                "-c",
                "trap '' TERM; echo $$ > " + pid + "; while :; do read -t 1 line; done");
        awaitFile(pid, p);
        long shell = readPid(pid);
        Files.delete(dir.resolve("x"));
        assertThat(p.exitCode()).isEqualTo(75);
        assertThat(p.err()).contains("SIGKILL after 500ms");
        await().atMost(Timing.seconds(10)).until(() -> !running(shell));
    }

    @Test
    void signalsIgnoredWhenInterlockStarts_stayIgnoredInTheCommand_othersAreReset() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Like nohup: SIGHUP ignored for interlock, so for the command too; SIGINT was not, so it is default.
        Process p = new ProcessBuilder(
                        "/bin/sh",
                        "-c",
                        "trap '' HUP; exec \"$0\" -Xshare:auto -XX:TieredStopAtLevel=1 -cp \"$1\""
                                + " dev.interlock.cli.Main run --backend \"$2\" x -- grep SigIgn /proc/self/status",
                        java,
                        System.getProperty("java.class.path"),
                        backend)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        started.add(p);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        long ignored = Long.parseUnsignedLong(out.replace("SigIgn:", "").trim(), 16);
        assertThat(ignored & 1).as("SIGHUP (1) ignored: %s", out).isEqualTo(1);
        assertThat(ignored & ~1L)
                .as("nothing else ignored (SIGTTOU is interlock's own): %s", out)
                .isZero();
    }

    @Test
    void statusAndList_showTheHolder_asTableAndJson() throws Exception {
        CliProcess holder = holder("x");
        CliProcess status = cli("status", "--backend", backend, "x", "y");
        assertThat(status.exitCode()).isEqualTo(0);
        String[] rows = status.out().split("\n");
        assertThat(rows[0])
                .startsWith("NAME")
                .contains("MODE")
                .contains("OWNER")
                .contains("PID")
                .contains("TOKEN");
        assertThat(rows[1])
                .startsWith("x ")
                .contains(" EX ")
                .contains(":" + holder.pid() + ":")
                .contains(" " + holder.pid() + " ");
        assertThat(rows[2]).startsWith("y ").contains(" free ");
        CliProcess json = cli("list", "--json", "--backend", backend);
        assertThat(json.exitCode()).isEqualTo(0);
        assertThat(json.out())
                .startsWith("{\"backend\":\"" + backend + "\",\"locks\":[{\"name\":\"x\",\"free\":false,")
                .contains("\"mode\":\"EX\"")
                .contains("\"pid\":" + holder.pid())
                .containsPattern("\"token\":\\d+");
        release(holder);
    }
}
