package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Crashes of real processes: between protocol steps, kill -9 at random moments, and stale-lock storms. */
class DirFaultTest {
    @TempDir
    Path tmp;

    private final List<Process> procs = new ArrayList<>();

    @AfterEach
    void killAll() {
        procs.forEach(Process::destroyForcibly);
    }

    private Path locks() throws Exception {
        return Files.createDirectories(tmp.resolve("locks"));
    }

    private Process start(List<String> jvmArgs, String... args) throws Exception {
        Process p = ChildJvm.builder(DirTestWorker.class, jvmArgs, args)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        procs.add(p);
        return p;
    }

    private static List<String> entries(Path lockDir) throws Exception {
        try (Stream<Path> s = Files.list(lockDir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** Acquires in both modes promptly (the crashed holder is reclaimed at once on this host) and checks nothing is left over. */
    private static void assertRecovered(Path root, String name) throws Exception {
        try (LockSpace s = Interlock.open("dir:" + root)) {
            try (Lease ex = s.acquire(name, Timing.seconds(5))) {
                assertThat(ex.isValid()).isTrue();
            }
            try (Lease sh = s.acquire(name, Mode.SHARED, Timing.seconds(5))) {
                assertThat(sh.isValid()).isTrue();
            }
            try (Lease ex = s.acquire(name, Timing.seconds(5))) {
                assertThat(ex.isValid()).isTrue();
            }
            try (Lease permit = s.lock(name).limit(2).acquire(Timing.seconds(5))) {
                assertThat(permit.isValid()).isTrue();
            }
            assertThat(s.status(name).isFree()).isTrue();
        }
        assertThat(entries(root.resolve(DirNames.encode(name))))
                .as("only the name record and one free gate remain")
                .hasSize(2)
                .contains("name")
                .anySatisfy(n -> assertThat(n).startsWith("F."));
    }

    @ParameterizedTest(name = "crash after {0} ({1})")
    @CsvSource({"E1, EX", "S1, SH", "S2, SH", "S3, SH", "S4, SH", "Q1, EX", "Q1, SH", "P1, P2", "P2, P2", "Q1, P1"})
    void crashBetweenProtocolSteps_leavesNothingThatBlocksOthers(String step, String mode) throws Exception {
        Path root = locks();
        Lease blocker = null;
        LockSpace mine = Interlock.open("dir:" + root);
        try {
            if (step.equals("Q1")) {
                // The child must wait, so it queues (behind a permit holder if it asks for a permit).
                blocker = mode.startsWith("P")
                        ? mine.lock("job").limit(1).tryAcquire().orElseThrow()
                        : mine.tryAcquire("job").orElseThrow();
            }
            Process p = start(List.of("-Dinterlock.dir.crashAt=" + step), "once", "dir:" + root, "job", mode);
            assertThat(p.waitFor(Timing.seconds(60).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(p.exitValue()).as("the worker stopped at step %s", step).isEqualTo(DirFaults.EXIT_CODE);
        } finally {
            if (blocker != null) {
                blocker.close();
            }
            mine.close();
        }
        assertRecovered(root, "job");
    }

    @Test
    void killNine_atRandomMoments_neverBreaksExclusion() throws Exception {
        Path root = locks();
        Path counter = tmp.resolve("counter");
        Files.writeString(counter, "0");
        Random rnd = new Random(42);
        int kills = 6;
        int width = 3;
        List<Path> logs = new ArrayList<>();
        for (int i = 0; i < width + kills; i++) {
            logs.add(Files.createFile(tmp.resolve("worker-" + i + ".log")));
        }
        Process[] live = new Process[width];
        int[] slot = new int[width];
        for (int i = 0; i < width; i++) {
            slot[i] = i;
            live[i] = start(
                    List.of(),
                    "loop",
                    "dir:" + root,
                    "job",
                    "mixed",
                    "100000",
                    logs.get(i).toString(),
                    counter.toString());
        }
        for (int k = 0; k < kills; k++) {
            int victim = rnd.nextInt(width);
            Path victimLog = logs.get(slot[victim]);
            long want = lines(victimLog) + 5 + rnd.nextInt(40);
            await().atMost(Timing.seconds(60)).until(() -> lines(victimLog) >= want);
            live[victim].destroyForcibly().waitFor(); // SIGKILL, wherever it is in its loop
            slot[victim] = width + k;
            live[victim] = start(
                    List.of(),
                    "loop",
                    "dir:" + root,
                    "job",
                    "mixed",
                    "100000",
                    logs.get(slot[victim]).toString(),
                    counter.toString());
        }
        Path lastLog = logs.get(slot[0]);
        await().atMost(Timing.seconds(60)).until(() -> lines(lastLog) >= 20);
        for (Process p : live) {
            p.destroyForcibly().waitFor();
        }
        List<ExclusionChecker.Interval> all = ExclusionChecker.read(logs);
        ExclusionChecker.Report r = ExclusionChecker.check(all);
        assertThat(r.violations()).isEmpty();
        assertThat(r.exclusive()).isPositive();
        long count = Long.parseLong(Files.readString(counter).trim());
        // A worker killed after writing the counter but before logging adds one unlogged increment.
        assertThat(count).isBetween((long) r.exclusive(), (long) r.exclusive() + kills + width);
        assertRecovered(root, "job");
    }

    private static long lines(Path p) throws java.io.IOException {
        try (Stream<String> s = Files.lines(p)) {
            return s.count();
        }
    }

    @Test
    void staleLockStorm_twentyProcessesBreakTheSameLock_exactlyOneTakesItEachTime() throws Exception {
        Path root = locks();
        int workers = 20;
        int rounds = 3;
        List<Path> logs = new ArrayList<>();
        List<Process> ps = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            Path log = tmp.resolve("storm-" + i + ".log");
            logs.add(log);
            ps.add(start(
                    List.of(),
                    "storm",
                    "dir:" + root,
                    root.toString(),
                    "storm",
                    Integer.toString(rounds),
                    log.toString()));
        }
        for (Process p : ps) {
            assertThat(p.waitFor(Timing.seconds(120).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(p.exitValue()).isZero();
        }
        List<ExclusionChecker.Interval> all = ExclusionChecker.read(logs);
        assertThat(all).hasSize(workers * rounds);
        assertThat(ExclusionChecker.check(all).violations()).isEmpty();
        // Every acquisition after the first broke the previous holder's abandoned lock.
        assertThat(all.stream()
                        .mapToLong(ExclusionChecker.Interval::token)
                        .max()
                        .orElseThrow())
                .isEqualTo(all.stream()
                                .mapToLong(ExclusionChecker.Interval::token)
                                .min()
                                .orElseThrow()
                        + workers * rounds
                        - 1);
        assertRecovered(root, "storm");
    }

    static String readHeld(Process p) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.startsWith("HELD ")) {
                return line;
            }
        }
        throw new AssertionError("worker ended without holding the lock, exit " + p.waitFor());
    }

    @Test
    void holderKilled_isReclaimedAtOnceOnTheSameHost() throws Exception {
        Path root = locks();
        Process p = start(List.of(), "hold", "dir:" + root, "job", "EX", "600000");
        readHeld(p);
        try (LockSpace s = Interlock.open("dir:" + root)) {
            assertThat(s.tryAcquire("job")).isEmpty();
            p.destroyForcibly().waitFor();
            assertThat(entries(root.resolve("job")))
                    .as("the killed holder left its gate")
                    .anySatisfy(n -> assertThat(n).startsWith("X.1."));
            try (Lease l = s.tryAcquire("job").orElseThrow()) {
                assertThat(l.token()).isEqualTo(2);
            }
        }
    }
}
