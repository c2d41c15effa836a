package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.ProcessIdentity;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * "Other hosts" simulated with unshare: a holder in its own pid and UTS namespace over the same
 * directory. Its pid collides with a live process of ours (it is pid 1 there), yet it must never
 * be judged by pid, only by its lease. Needs root ({@code unshare --pid --uts --fork --mount-proc}).
 */
class DirNamespaceTest {
    @TempDir
    Path tmp;

    private Process child;

    @BeforeEach
    void requireUnshare() throws Exception {
        Process p = new ProcessBuilder("unshare", "--pid", "--uts", "--fork", "--mount-proc", "--kill-child", "true")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0)
                .as(
                        "this test simulates other hosts with 'unshare --pid --uts --fork --mount-proc' and needs root; it failed: %s",
                        out)
                .isTrue();
    }

    @AfterEach
    void stop() {
        if (child != null) {
            child.destroyForcibly();
        }
    }

    @Test
    void holderInAnotherPidNamespace_isJudgedByItsLeaseOnly_neverByItsPid() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("locks"));
        List<String> java = new ArrayList<>(
                ChildJvm.builder(DirTestWorker.class, List.of(), "hold", "dir:" + root, "job", "EX", "3600000")
                        .command());
        String cmd = "hostname other-host && exec "
                + String.join(
                        " ", java.stream().map(DirNamespaceTest::shellQuote).toList());
        child = new ProcessBuilder(
                        "unshare", "--pid", "--uts", "--fork", "--mount-proc", "--kill-child", "sh", "-c", cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String held = DirFaultTest.readHeld(child);
        long pidThere = Long.parseLong(held.split(" ")[2]);
        assertThat(ProcessIdentity.startTicks(pidThere))
                .as("pid %d also names a live process here", pidThere)
                .isPresent();

        AtomicLong now = new AtomicLong();
        try (LockSpace locks = Interlock.builder("dir:" + root).ticker(now::get).open()) {
            assertThat(locks.status("job").holders()).singleElement().satisfies(h -> {
                assertThat(h.host()).hasValue("other-host");
                assertThat(h.pid()).isEqualTo(pidThere);
            });
            assertThat(locks.tryAcquire("job")).isEmpty();
            assertThat(locks.tryAcquire("job", Mode.SHARED)).isEmpty();
            now.addAndGet(Duration.ofMinutes(59).toNanos());
            assertThat(locks.tryAcquire("job"))
                    .as("alive in its namespace, lease not over")
                    .isEmpty();
            List<String> before = entries(root.resolve("job"));
            // SIGKILL the holder itself (closing our end of its stdin first would let it release cleanly).
            ProcessHandle holder = child.toHandle().children().findFirst().orElseThrow();
            assertThat(holder.destroyForcibly()).isTrue();
            holder.onExit().get(10, TimeUnit.SECONDS);
            assertThat(locks.tryAcquire("job"))
                    .as(
                            "dead, but its death cannot be proven from here: wait for the lease (entries before %s, after %s)",
                            before, entries(root.resolve("job")))
                    .isEmpty();
            now.addAndGet(Duration.ofMinutes(1).toNanos());
            try (Lease l = locks.acquire("job", Timing.seconds(5))) {
                assertThat(l.token()).isEqualTo(Long.parseLong(held.split(" ")[1]) + 1);
            }
        }
    }

    @Test
    void workersOnTwoSimulatedHosts_neverOverlap() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("locks"));
        Path counter = Files.writeString(tmp.resolve("counter"), "0");
        int iterations = 100;
        List<Path> logs = new ArrayList<>();
        StringBuilder script = new StringBuilder("hostname other-host");
        for (int i = 0; i < 2; i++) {
            Path log = Files.createFile(tmp.resolve("there-" + i + ".log"));
            logs.add(log);
            List<String> java = ChildJvm.builder(
                            DirTestWorker.class,
                            List.of(),
                            "loop",
                            "dir:" + root,
                            "job",
                            "mixed",
                            Integer.toString(iterations),
                            log.toString(),
                            counter.toString())
                    .command();
            script.append(" && { ")
                    .append(String.join(
                            " ", java.stream().map(DirNamespaceTest::shellQuote).toList()))
                    .append(" & }");
        }
        script.append(" && wait");
        child = new ProcessBuilder(
                        "unshare",
                        "--pid",
                        "--uts",
                        "--fork",
                        "--mount-proc",
                        "--kill-child",
                        "sh",
                        "-c",
                        script.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        List<Process> here = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Path log = Files.createFile(tmp.resolve("here-" + i + ".log"));
            logs.add(log);
            here.add(ChildJvm.builder(
                            DirTestWorker.class,
                            List.of(),
                            "loop",
                            "dir:" + root,
                            "job",
                            "mixed",
                            Integer.toString(iterations),
                            log.toString(),
                            counter.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start());
        }
        try {
            for (Process p : here) {
                assertThat(p.waitFor(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS))
                        .isTrue();
                assertThat(p.exitValue()).isZero();
            }
            assertThat(child.waitFor(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(child.exitValue()).isZero();
        } finally {
            here.forEach(Process::destroyForcibly);
        }
        List<dev.interlock.testkit.ExclusionChecker.Interval> all = dev.interlock.testkit.ExclusionChecker.read(logs);
        assertThat(all).hasSize(4 * iterations);
        dev.interlock.testkit.ExclusionChecker.Report r = dev.interlock.testkit.ExclusionChecker.check(all);
        assertThat(r.violations()).isEmpty();
        assertThat(Long.parseLong(Files.readString(counter).trim())).isEqualTo(r.exclusive());
    }

    private static List<String> entries(Path d) throws java.io.IOException {
        try (java.util.stream.Stream<Path> st = Files.list(d)) {
            return st.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static String shellQuote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
