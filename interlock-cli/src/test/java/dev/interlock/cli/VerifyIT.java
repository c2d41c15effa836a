package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import dev.interlock.testservers.RedisTestServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock verify} as a real process against real backends, and against backends that do
 * not exclude, which it must catch. Runs are 2 seconds long with 2 or 3 workers: long enough for
 * thousands of sections on {@code flock:} and hundreds on {@code dir:}. With {@code --limit}, a
 * semaphore on {@code redis:} (the shared test server) and on {@code broken:grant}, which ignores
 * the limit.
 *
 * <p>"Hosts" and "directories that look like one" are simulated with {@code unshare} (root):
 * another mount namespace where the lock directory is a bind mount of another directory, and
 * another UTS, pid and time namespace (a monotonic clock 100000s ahead: any comparison of clocks
 * across hosts would turn a correct run into violations).
 */
class VerifyIT {
    @TempDir
    Path tmp;

    Path locks;
    Path scratch;
    final List<CliProcess> clis = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        locks = Files.createDirectory(tmp.resolve("locks"));
        scratch = Files.createDirectory(tmp.resolve("scratch"));
    }

    @AfterEach
    void tearDown() {
        clis.forEach(CliProcess::close);
    }

    /** interlock with its temporary files in {@code scratch}, so the test can see that none is left. */
    CliProcess verify(String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of("verify"));
        all.addAll(List.of(args));
        CliProcess p = CliProcess.start(List.of("-Djava.io.tmpdir=" + scratch), Map.of(), all.toArray(new String[0]));
        clis.add(p);
        return p;
    }

    CliProcess verifyWrapped(List<String> prefix, String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of("verify"));
        all.addAll(List.of(args));
        CliProcess p =
                CliProcess.startWrapped(prefix, List.of("-Djava.io.tmpdir=" + scratch), all.toArray(new String[0]));
        clis.add(p);
        return p;
    }

    static int exit(CliProcess p) throws InterruptedException {
        return p.exitCode(Timing.seconds(60));
    }

    static void requireUnshare() throws Exception {
        Process p = new ProcessBuilder(
                        "unshare",
                        "--mount",
                        "--pid",
                        "--uts",
                        "--fork",
                        "--mount-proc",
                        "--time",
                        "--kill-child",
                        "true")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(
                p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0,
                "simulating other hosts needs root and 'unshare --mount --pid --uts --time' (Linux 5.6): " + out);
    }

    static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    static String shellQuote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    @Test
    void flock_holds_theScreenHasTheNumbers_andNothingIsLeftBehind() throws Exception {
        CliProcess p = verify("--backend", "flock:" + locks, "--processes", "3", "--duration", "2s");
        assertThat(exit(p)).as(p.out() + p.err()).isEqualTo(0);
        String out = p.out();
        assertThat(out)
                .startsWith("interlock verify: flock:" + locks + ", lock 'interlock-verify-")
                .contains("3 processes, 2s, 25% shared")
                .containsPattern("(?m)^file system   \\S+ \\(statfs 0x[0-9A-F]+\\)")
                .containsPattern("(?m)^acquisitions  [1-9]\\d* \\(\\d+ exclusive, \\d+ shared\\), \\d+/s$")
                .containsPattern("(?m)^exclusion     held: 0 violations")
                .containsPattern("(?m)^counter       (\\d+) after \\1 exclusive sections: no increment lost$")
                .containsPattern("(?m)^hand-off      p50 \\S+, p95 \\S+, p99 \\S+, max \\S+ \\(\\d+ hand-offs")
                .containsPattern("(?m)^longest wait  \\S+ \\(w\\d@")
                .containsPattern("(?m)^result        mutual exclusion held \\(exit 0\\)$");
        assertThat(p.err())
                .as("no progress line when stderr is not a terminal")
                .doesNotContain("\r")
                .isEmpty();
        assertThat(names(scratch))
                .as("the private directory of the counter and the records is removed")
                .isEmpty();
        assertThat(names(locks)).as("the made-up lock's file is removed").containsExactly(".gates");
        assertThat(names(locks.resolve(".gates"))).isEmpty();
    }

    @Test
    void dir_crashTest_killedHoldersAreReplaced_andExclusionHolds_json() throws Exception {
        CliProcess p = verify(
                "--backend",
                "dir:" + locks,
                "--processes",
                "3",
                "--duration",
                "3s",
                "--crash-test",
                "--json",
                "--name",
                "crash");
        assertThat(exit(p)).as(p.out() + p.err()).isEqualTo(0);
        String json = p.out().trim();
        assertThat(json)
                .startsWith("{\"result\":\"held\",\"exitCode\":0,\"backend\":\"dir:" + locks + "\",\"name\":\"crash\"")
                .contains("\"violations\":[]")
                .contains("\"lostIncrements\":0")
                .contains("\"fileSystem\":{\"path\":\"" + locks + "\"")
                .doesNotContain("\n");
        Matcher kills = Pattern.compile("\"crashTest\":\\{\"kills\":(\\d),\"recoveryMicros\":\\[([0-9,null]*)]}")
                .matcher(json);
        assertThat(kills.find()).as(json).isTrue();
        assertThat(Integer.parseInt(kills.group(1)))
                .as("holders killed inside their section")
                .isEqualTo(3);
        assertThat(kills.group(2).split(",")).hasSize(Integer.parseInt(kills.group(1)));
        assertThat(json).containsPattern("\"killedExclusiveSections\":" + kills.group(1));
        assertThat(names(locks)).as("a --name lock is the user's: kept").contains("crash");
    }

    /**
     * Issue 32: kills were asked of one worker chosen beforehand, and a kill was not made when that
     * worker did not get the lock before the end. Here half the workers never get it (their lock
     * space is a flock: directory whose lock flock(1) holds): every kill must still be made.
     */
    @Test
    void crashTest_workersThatNeverGetTheLock_doNotCostAKill() throws Exception {
        Path held = Files.createDirectory(tmp.resolve("held"));
        Process holder = new ProcessBuilder("flock", held.resolve("crash").toString(), "sleep", "600").start();
        try {
            Path wrapper = tmp.resolve("blocked-worker");
            Files.writeString(
                    wrapper,
                    "#!/bin/sh\n" + VerifyWorker.BACKEND_ENV + "=" + shellQuote("flock:" + held) + " exec \"$@\"\n");
            Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
            CliProcess p = CliProcess.start(
                    List.of("-Djava.io.tmpdir=" + scratch, "-D" + VerifyWorkers.WRAPPER_PROPERTY + "=" + wrapper),
                    Map.of(),
                    "verify",
                    "--backend",
                    "dir:" + locks,
                    "--processes",
                    "4",
                    "--duration",
                    "4s",
                    "--crash-test",
                    "--json",
                    "--name",
                    "crash");
            clis.add(p);
            assertThat(exit(p)).as(p.out() + p.err()).isEqualTo(0);
            assertThat(p.out())
                    .as(p.out())
                    .contains("\"crashTest\":{\"kills\":3,")
                    .contains("\"warnings\":[]");
        } finally {
            holder.destroy();
        }
    }

    @Test
    void aBackendThatDoesNotExclude_isReportedViolated_withTheEvidence_andTheRecordsKept() throws Exception {
        Path keep = tmp.resolve("evidence");
        CliProcess p =
                verify("--backend", "broken:grant", "--processes", "3", "--duration", "2s", "--keep", keep.toString());
        assertThat(exit(p)).as(p.out() + p.err()).isEqualTo(2);
        String out = p.out();
        assertThat(out)
                .containsPattern("(?m)^exclusion     VIOLATED: (at least )?\\d+ violations")
                .containsPattern(
                        "(?m)^  (lost increment: two exclusive sections read \\d+ and both wrote \\d+: EX token \\d+ read \\d+ \\[\\d+, \\d+] from w\\d@\\S+ and EX token"
                                + "|counter is \\d+ after \\d+ exclusive sections from 0: \\d+ increments lost)")
                .containsPattern(
                        "(?m)^  overlap: (EX|SH) token \\d+ .* from w\\d@\\S+ and (EX|SH) token \\d+ .* from w\\d@")
                .containsPattern("(?m)^counter       \\d+ after \\d+ exclusive sections: \\d+ increments lost$")
                .containsPattern("(?m)^result        MUTUAL EXCLUSION VIOLATED \\(exit 2\\).*the records are in "
                        + Pattern.quote(keep.toString()));
        assertThat(names(keep))
                .contains(
                        "counter", "host", "kills.log", "worker-0.log", "worker-1.log", "worker-2.log", "worker-0.err");
        assertThat(Files.getPosixFilePermissions(keep)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(Files.readAllLines(keep.resolve("worker-0.log")))
                .anyMatch(l -> l.matches("(EX|SH) \\d+ -?\\d+ \\S+ \\d+ \\d+ \\d+"));
    }

    @Test
    void flockOnTwoDirectoriesThatLookLikeOne_isReportedViolated() throws Exception {
        requireUnshare();
        // Odd-numbered workers see the lock directory's path as a bind mount of another directory.
        Path other = Files.createDirectory(tmp.resolve("other"));
        Path wrapper = tmp.resolve("other-namespace");
        Files.writeString(
                wrapper,
                "#!/bin/sh\nexec unshare --mount sh -c 'mount --bind " + shellQuote(other.toString()) + " "
                        + shellQuote(locks.toString()) + " && exec \"$@\"' sh \"$@\"\n");
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
        CliProcess p = CliProcess.start(
                List.of("-Djava.io.tmpdir=" + scratch, "-D" + VerifyWorkers.WRAPPER_PROPERTY + "=" + wrapper),
                Map.of(),
                "verify",
                "--backend",
                "flock:" + locks,
                "--processes",
                "3",
                "--duration",
                "2s",
                "--name",
                "job");
        clis.add(p);
        assertThat(exit(p)).as(p.out() + p.err()).isEqualTo(2);
        assertThat(p.out())
                .containsPattern("(?m)^exclusion     VIOLATED")
                .containsPattern("(?m)^  (overlap|lost increment|counter is)");
        assertThat(names(other))
                .as("the odd worker really locked the other directory")
                .contains("job");
    }

    @Test
    void twoHosts_withUnrelatedClocks_holdOnDir_andMergeWithoutComparingClocks() throws Exception {
        requireUnshare();
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        CliProcess leadHost = verify(
                "--backend",
                "dir:" + locks,
                "--lead",
                "run1",
                "--hosts",
                "2",
                "--processes",
                "2",
                "--duration",
                "2s",
                "--shared-dir",
                shared.toString(),
                "--json");
        CliProcess other = verifyWrapped(
                otherHost(null),
                "--backend",
                "dir:" + locks,
                "--join",
                "run1",
                "--processes",
                "2",
                "--shared-dir",
                shared.toString(),
                "--json");
        assertThat(exit(leadHost)).as(leadHost.out() + leadHost.err()).isEqualTo(0);
        assertThat(exit(other)).as(other.out() + other.err()).isEqualTo(0);
        String json = leadHost.out();
        assertThat(json)
                .contains("\"result\":\"held\"", "\"runId\":\"run1\"", "\"violations\":[]", "\"lostIncrements\":0");
        Matcher hosts = Pattern.compile(
                        "\\{\"host\":\"([^\"]+)\",\"clock\":\"([^\"]+)\",\"processes\":2,\"acquisitions\":([1-9]\\d*)")
                .matcher(json);
        List<String> clocks = new ArrayList<>();
        List<String> hostNames = new ArrayList<>();
        while (hosts.find()) {
            hostNames.add(hosts.group(1));
            clocks.add(hosts.group(2));
        }
        assertThat(hostNames).hasSize(2).anyMatch(h -> h.startsWith("other-host-"));
        assertThat(clocks.get(0)).as("a time namespace is another clock").isNotEqualTo(clocks.get(1));
        Matcher total = Pattern.compile("\"acquisitions\":(\\d+)").matcher(json);
        assertThat(total.find()).isTrue();
        assertThat(other.out())
                .as("every host prints the merged result")
                .contains("\"result\":\"held\"", "\"acquisitions\":" + total.group(1) + ",");
        assertThat(names(shared))
                .as("the lead removes the run once every host has read it")
                .isEmpty();
    }

    @Test
    void aDirectoryThatTwoMountNamespacesSeeDifferently_isReportedViolated_onBothHosts() throws Exception {
        requireUnshare();
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Path elsewhere = Files.createDirectory(tmp.resolve("elsewhere"));
        CliProcess leadHost = verify(
                "--backend",
                "dir:" + locks,
                "--lead",
                "run2",
                "--hosts",
                "2",
                "--processes",
                "2",
                "--duration",
                "2s",
                "--shared-dir",
                shared.toString());
        CliProcess other = verifyWrapped(
                otherHost(elsewhere),
                "--backend",
                "dir:" + locks,
                "--join",
                "run2",
                "--processes",
                "2",
                "--shared-dir",
                shared.toString());
        assertThat(exit(leadHost)).as(leadHost.out() + leadHost.err()).isEqualTo(2);
        assertThat(exit(other)).as(other.out() + other.err()).isEqualTo(2);
        for (CliProcess p : List.of(leadHost, other)) {
            // Clocks differ: only the counter and the tokens can tell, and they do.
            assertThat(p.out())
                    .containsPattern("(?m)^exclusion     VIOLATED")
                    .containsPattern("(?m)^  (lost increment|counter is|token order|token \\d+ issued twice)")
                    .doesNotContainPattern("(?m)^  overlap");
        }
    }

    /**
     * Another "host": its own UTS (host name), pid, mount and time namespaces (CLOCK_MONOTONIC
     * 100000s ahead); with {@code lockDirThere}, the lock directory is that directory there.
     */
    List<String> otherHost(Path lockDirThere) {
        String setup = "hostname other-host"
                + (lockDirThere == null
                        ? ""
                        : " && mount --bind " + shellQuote(lockDirThere.toString()) + " "
                                + shellQuote(locks.toString()));
        return List.of(
                "unshare",
                "--mount",
                "--uts",
                "--pid",
                "--fork",
                "--mount-proc",
                "--time",
                "--monotonic",
                "100000",
                "--kill-child",
                "sh",
                "-c",
                setup + " && exec \"$@\"",
                "sh");
    }

    @Test
    void onATerminal_aLiveProgressLine_goesToStderr() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/script")), "needs script(1) from util-linux for a terminal");
        List<String> java = ChildJvm.builder(
                        Main.class,
                        List.of("-Djava.io.tmpdir=" + scratch),
                        "verify",
                        "--backend",
                        "flock:" + locks,
                        "--processes",
                        "2",
                        "--duration",
                        "1s")
                .command();
        String cmd = java.stream().map(VerifyIT::shellQuote).collect(Collectors.joining(" "));
        Process p = new ProcessBuilder("/usr/bin/script", "-qfec", cmd, "/dev/null")
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String tty = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(tty).isEqualTo(0);
        assertThat(tty)
                .contains("\rverify: ")
                .containsPattern("\rverify: \\d\\.\\ds of 1s, \\d+ acquisitions")
                .contains("result        mutual exclusion held");
    }

    @Test
    void sigterm_stopsTheWorkers_andRemovesThePrivateDirectory() throws Exception {
        CliProcess p = verify("--backend", "flock:" + locks, "--processes", "2", "--duration", "60s");
        // Running once a worker has recorded a section.
        org.awaitility.Awaitility.await().atMost(Timing.seconds(30)).until(() -> {
            assertThat(p.process.isAlive()).as(p.err()).isTrue();
            try (Stream<Path> s = Files.walk(scratch)) {
                return s.anyMatch(f -> f.getFileName().toString().equals("worker-0.log")
                        && f.toFile().length() > 0);
            }
        });
        List<ProcessHandle> workers = p.process.descendants().collect(Collectors.toList());
        assertThat(workers).hasSize(2);
        p.process.destroy(); // SIGTERM
        assertThat(p.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        for (ProcessHandle w : workers) {
            assertThat(w.onExit().get(10, TimeUnit.SECONDS).isAlive()).isFalse();
        }
        assertThat(names(scratch)).as("the private directory is removed").isEmpty();
    }

    @Test
    void redis_crashTest_atMostNHeldAtOnce_andEveryReleasedPermitComesBack() throws Exception {
        String backend = RedisTestServer.shared().uri(RedisTestServer.newPrefix(), "");
        CliProcess p =
                verify("--backend", backend, "--limit", "2", "-p", "4", "-d", "4s", "--lease", "500ms", "--crash-test");
        assertThat(p.exitCode(Timing.seconds(90))).as(p.out() + p.err()).isZero();
        assertThat(p.out())
                .contains(", semaphore 'interlock-verify-")
                .contains("' of 2 permits, 4 processes, 4s, crash test\n")
                .containsPattern("(?m)^acquisitions  \\d+ permits \\(\\d killed\\), \\d+/s$")
                .containsPattern("(?m)^limit         held: at most 2 held at once \\(every holder found a free slot"
                        + " among 2, tokens unique and in order\\); the most seen at once: 2")
                .containsPattern("(?m)^returned      every released permit came back")
                .containsPattern("(?m)^crash test    \\d holders? killed \\(SIGKILL\\) inside their section; the"
                        + " permit back \\(2 others held at once on the same host\\) after ")
                .containsPattern("(?m)^result        at most 2 held at once \\(exit 0\\)$");
    }

    @Test
    void aBackendThatIgnoresTheLimit_isReportedViolated_byTheSlots() throws Exception {
        CliProcess p = verify("--backend", "broken:grant", "--limit", "2", "-p", "4", "-d", "2s", "--json");
        assertThat(p.exitCode(Timing.seconds(60))).as(p.out() + p.err()).isEqualTo(2);
        assertThat(p.out())
                .startsWith("{\"result\":\"violated\",\"exitCode\":2,")
                .contains("\"limit\":2,")
                .containsPattern("\"more than 2 held at once: w\\d@\\S+ \\(token \\d+\\) found all 2 slots taken, by"
                        + " w\\d@\\S+ \\d+, w\\d@\\S+ \\d+\"");
    }
}
