package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code interlock update} as a real process: the safe-update recipe, lock → read → temp → rename → unlock. */
class UpdateProcessTest {
    @TempDir
    Path tmp;

    Path dir;
    Path data;
    String backend;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createDirectory(tmp.resolve("locks"));
        data = Files.createDirectory(tmp.resolve("data"));
        backend = "flock:" + dir;
    }

    private CliProcess update(Path file, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("update", "--backend", backend, file.toString(), "--"));
        args.addAll(List.of(command));
        return CliProcess.start(List.of(), Map.of(), args.toArray(new String[0]));
    }

    private List<Path> leftovers() throws Exception {
        try (Stream<Path> s = Files.list(data)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".tmp")
                            && p.getFileName().toString().contains("interlock"))
                    .toList();
        }
    }

    @Test
    void concurrentIncrements_loseNothing() throws Exception {
        Path counter = data.resolve("counter");
        int workers = 4;
        int rounds = 4;
        // Each worker is a shell loop of separate interlock processes: a plain read-increment-write
        // that would lose updates without the lock.
        List<Process> ps = new ArrayList<>();
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int w = 0; w < workers; w++) {
            ps.add(new ProcessBuilder(
                            "sh",
                            "-c",
                            "i=0; while [ $i -lt " + rounds
                                    + " ]; do \"$0\" -XX:TieredStopAtLevel=1 -Xshare:auto -cp \"$1\" "
                                    + Main.class.getName()
                                    + " update --backend \"$2\" \"$3\" -- sh -c 'read n; sleep 0.01; echo $((${n:-0} + 1))' || exit 1; i=$((i+1)); done",
                            javaBin,
                            System.getProperty("java.class.path"),
                            backend,
                            counter.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        }
        for (Process p : ps) {
            assertThat(p.waitFor(Timing.seconds(120).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(p.exitValue()).isZero();
        }
        assertThat(Files.readString(counter).trim()).isEqualTo(Integer.toString(workers * rounds));
        assertThat(leftovers()).isEmpty();
    }

    /**
     * Issue 26, 9: files whose real paths differ only in bytes that are not UTF-8 (0xff, 0xfe)
     * shared one default lock name, both bytes decoded as U+FFFD. The directories are made by a
     * shell (Java cannot name them) and reached through ASCII symlinks, so FILE itself is ASCII.
     */
    @Test
    void realPathsThatAreNotUtf8_getOneLockNameEach_andUtf8PathsKeepTheirs() throws Exception {
        Process mk = new ProcessBuilder(
                        "sh",
                        "-c",
                        "cd \"$0\" && mkdir \"$(printf '\\377')\" \"$(printf '\\376')\""
                                + " && ln -s \"$(printf '\\377')\" ff && ln -s \"$(printf '\\376')\" fe",
                        data.toString())
                .inheritIO()
                .start();
        assertThat(mk.waitFor()).isZero();
        Set<String> names = new HashSet<>();
        for (String link : List.of("ff", "fe")) {
            try (CliProcess p =
                    update(data.resolve(link).resolve("f"), "sh", "-c", "printf '%s\\n' \"$INTERLOCK_NAME\" >&2")) {
                assertThat(p.exitCode()).as(p.err()).isZero();
                String name = p.err()
                        .lines()
                        .filter(l -> l.startsWith("update"))
                        .findFirst()
                        .orElseThrow();
                names.add(name);
            }
        }
        assertThat(names)
                .as("one lock per file")
                .hasSize(2)
                .containsExactlyInAnyOrder(
                        "update-bytes:" + data.toRealPath() + "/%FF/f", "update-bytes:" + data.toRealPath() + "/%FE/f");
        Path utf8 = Files.createDirectory(data.resolve("caf\u00e9"));
        try (CliProcess p = update(utf8.resolve("f"), "sh", "-c", "printf '%s\\n' \"$INTERLOCK_NAME\" >&2")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
            assertThat(p.err())
                    .as("a UTF-8 path keeps its name")
                    .contains("update:" + utf8.toRealPath().resolve("f"));
        }
    }

    @Test
    void failingCommand_leavesTheFileUnchanged() throws Exception {
        Path f = data.resolve("config");
        Files.writeString(f, "keep me\n");
        try (CliProcess p = update(f, "sh", "-c", "echo garbage; exit 3")) {
            assertThat(p.exitCode()).isEqualTo(3);
            assertThat(p.err()).contains("exited with 3").contains("is unchanged");
        }
        assertThat(Files.readString(f)).isEqualTo("keep me\n");
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void missingFile_isCreatedFromEmptyInput_andEnvironmentIsSet() throws Exception {
        Path f = data.resolve("new");
        try (CliProcess p = update(f, "sh", "-c", "cat; echo \"$INTERLOCK_FILE $INTERLOCK_TOKEN\"")) {
            assertThat(p.exitCode()).isZero();
        }
        assertThat(Files.readString(f)).startsWith(f.toRealPath() + " ").matches("(?s).* [0-9]+\\n");
    }

    @Test
    void modeIsKept_newFileGetsTheUmasksMode() throws Exception {
        Path f = data.resolve("f");
        Files.writeString(f, "a\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r-----"));
        try (CliProcess p = update(f, "sed", "s/a/b/")) {
            assertThat(p.exitCode()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("b\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f)))
                .isEqualTo("rw-r-----");
        Path fresh = data.resolve("fresh");
        try (CliProcess p = update(fresh, "echo", "new")) {
            assertThat(p.exitCode()).isZero();
        }
        int umask = Integer.parseInt(
                Files.readAllLines(Path.of("/proc/self/status")).stream()
                        .filter(l -> l.startsWith("Umask:"))
                        .findFirst()
                        .orElseThrow()
                        .substring(6)
                        .trim(),
                8);
        assertThat(Integer.toOctalString((Integer) Files.getAttribute(fresh, "unix:mode") & 0777))
                .isEqualTo(Integer.toOctalString(0666 & ~umask));
    }

    /** The help shows the counter example as a user must type it (picocli used to expand ${n:-0} to 0). */
    @Test
    void help_showsTheCounterExampleAsTyped() throws Exception {
        try (CliProcess p = CliProcess.start("update", "--help")) {
            assertThat(p.exitCode()).isZero();
            assertThat(p.out())
                    .contains("  interlock update counter.txt -- sh -c 'read n; echo $((${n:-0} + 1))'\n")
                    .contains("FILE is not a")
                    .contains("regular file");
        }
        try (CliProcess p = CliProcess.start("--help")) {
            assertThat(p.exitCode()).isZero();
            assertThat(p.out()).contains("  interlock update counter.txt -- sh -c 'read n; echo $((${n:-0} + 1))'\n");
        }
    }

    /**
     * {@code b/link/../f} is {@code a/f} when {@code b/link} leads to {@code a/sub}: the kernel
     * resolves {@code ..} after the link. A string clean-up of the path said {@code b/f}, and
     * replaced the wrong file under the wrong lock.
     */
    @Test
    void dotDotAfterALink_meansWhatTheKernelMeans() throws Exception {
        Path a = Files.createDirectories(data.resolve("a/sub"));
        Path b = Files.createDirectory(data.resolve("b"));
        Files.createSymbolicLink(b.resolve("link"), Path.of("../a/sub"));
        Files.writeString(data.resolve("a/f"), "kernel's\n");
        Files.writeString(b.resolve("f"), "string's\n");
        Path real = data.toRealPath().resolve("a/f");
        try (CliProcess p = update(
                Path.of(b + "/link/../f"), "sh", "-c", "cat; echo \"$INTERLOCK_FILE\"; echo \"$INTERLOCK_NAME\"")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(Files.readString(data.resolve("a/f"))).isEqualTo("kernel's\n" + real + "\nupdate:" + real + "\n");
        assertThat(Files.readString(b.resolve("f"))).isEqualTo("string's\n");
        assertThat(a).isDirectory();
    }

    /**
     * One file reached through two paths (its directory and a link to it) is one lock: two loops of
     * increments, one through each path, lose nothing, and no two COMMANDs overlap. (The lock was
     * named after the path as typed, so the two loops did not exclude each other.)
     */
    @Test
    void oneFileThroughTwoPaths_isOneLock() throws Exception {
        Path real = Files.createDirectory(data.resolve("real"));
        Path alias = data.resolve("alias");
        Files.createSymbolicLink(alias, real);
        int rounds = 8;
        List<Path> paths = List.of(real.resolve("counter"), alias.resolve("counter"));
        List<Path> logs = new ArrayList<>();
        List<Process> ps = new ArrayList<>();
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int w = 0; w < paths.size(); w++) {
            Path log = data.resolve("sections-" + w + ".log");
            logs.add(log);
            // Each COMMAND logs its critical section (MODE TOKEN ENTER EXIT, as ExclusionChecker reads them) and the
            // lock name.
            String command =
                    "s=$(date +%s%N); read n; echo $((${n:-0} + 1)); echo \"EX $INTERLOCK_TOKEN $s $(date +%s%N)\" >> \"$4\";"
                            + " echo \"$INTERLOCK_NAME\" >> \"$4.names\"";
            ps.add(new ProcessBuilder(
                            "sh",
                            "-c",
                            "i=0; while [ $i -lt " + rounds
                                    + " ]; do \"$0\" -XX:TieredStopAtLevel=1 -Xshare:auto -cp \"$1\" "
                                    + Main.class.getName() + " update --backend \"$2\" \"$3\" -- sh -c '" + command
                                    + "' sh x y z \"$4\" || exit 1; i=$((i+1)); done",
                            javaBin,
                            System.getProperty("java.class.path"),
                            backend,
                            paths.get(w).toString(),
                            log.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        }
        for (Process p : ps) {
            assertThat(p.waitFor(Timing.seconds(120).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(p.exitValue()).isZero();
        }
        Set<String> names = new HashSet<>();
        for (Path log : logs) {
            names.addAll(Files.readAllLines(Path.of(log + ".names")));
        }
        assertThat(names).containsExactly("update:" + real.toRealPath().resolve("counter"));
        List<ExclusionChecker.Interval> sections = ExclusionChecker.read(logs);
        assertThat(sections).hasSize(2 * rounds);
        assertThat(ExclusionChecker.check(sections).violations()).isEmpty();
        assertThat(Files.readString(real.resolve("counter")).trim()).isEqualTo(Integer.toString(2 * rounds));
        assertThat(leftovers()).isEmpty();
    }

    /** A 255-byte name (the most a file system allows) works: the temporary name no longer adds to FILE's. */
    @Test
    void longestFileName_works() throws Exception {
        Path f = data.resolve("n".repeat(251) + ".txt");
        assertThat(f.getFileName().toString()).hasSize(255);
        Files.writeString(f, "41\n");
        try (CliProcess p = update(f, "sh", "-c", "read n; echo $((n + 1))")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("42\n");
        assertThat(leftovers()).isEmpty();
        try (Stream<Path> s = Files.list(data)) {
            assertThat(s.filter(p -> p.getFileName().toString().startsWith(".")))
                    .isEmpty();
        }
    }

    @Test
    void badUsage_exits64() throws Exception {
        try (CliProcess p = CliProcess.start(
                "update", "--backend", backend, data.resolve("x").toString(), "cat")) {
            assertThat(p.exitCode()).isEqualTo(64);
            assertThat(p.err()).contains("missing '--'");
        }
        try (CliProcess p = update(data, "cat")) {
            assertThat(p.exitCode()).isEqualTo(64);
            assertThat(p.err()).contains("is a directory");
        }
        try (CliProcess p = update(data.resolve("no/such/file"), "cat")) {
            assertThat(p.exitCode()).isEqualTo(64);
            assertThat(p.err()).contains("does not exist");
        }
    }

    @Test
    void commandNotFound_exits127_andLeavesNothing() throws Exception {
        Path f = data.resolve("f");
        Files.writeString(f, "x");
        try (CliProcess p = update(f, "no-such-command-anywhere")) {
            assertThat(p.exitCode()).isEqualTo(127);
        }
        assertThat(Files.readString(f)).isEqualTo("x");
        assertThat(leftovers()).isEmpty();
    }

    /** The same -n, -w, -E and -q as run: a busy lock is the conflict code, and -q says nothing of it. */
    @Test
    void busyLock_noWaitOrWaitRunsOut_isTheConflictCode_quietSaysNothing_fileUnchanged() throws Exception {
        Path f = data.resolve("config");
        Files.writeString(f, "keep me\n");
        Path ready = tmp.resolve("holder.ready");
        CliProcess holder = CliProcess.start(
                "run", "--backend", backend, "cfg", "--", "sh", "-c", "echo $$ > " + ready + "; read line");
        await().atMost(Timing.seconds(20))
                .until(() -> Files.exists(ready) && Files.size(ready) > 0 || !holder.process.isAlive());
        try (CliProcess busy = CliProcess.start(
                "update", "-n", "--lock", "cfg", "--backend", backend, f.toString(), "--", "echo", "new")) {
            assertThat(busy.exitCode()).isEqualTo(1);
            assertThat(busy.err()).contains("'cfg' is busy (held EX by ");
        }
        try (CliProcess quiet = CliProcess.start(
                "update",
                "-q",
                "-w",
                "200ms",
                "-E",
                "9",
                "--lock",
                "cfg",
                "--backend",
                backend,
                f.toString(),
                "--",
                "echo",
                "new")) {
            assertThat(quiet.exitCode()).isEqualTo(9);
            assertThat(quiet.err()).isEmpty();
        }
        assertThat(Files.readString(f)).isEqualTo("keep me\n");
        RunProcessTest.release(holder);
        try (CliProcess free = CliProcess.start(
                "update", "-n", "-q", "--lock", "cfg", "--backend", backend, f.toString(), "--", "echo", "new")) {
            assertThat(free.exitCode()).as(free.err()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("new\n");
    }

    /**
     * A background process that COMMAND leaves behind keeps its stdout, the temporary file: it
     * used to write into FILE after the rename, outside the lock. It is stopped before the
     * commit. It waits on a FIFO (opened read-write, so it never sees an end) that the test
     * writes only after update exited: if it still lived, it would append LATE then.
     */
    @Test
    void backgroundChildOfCommand_isStoppedBeforeTheCommit_andNeverWritesIntoFile() throws Exception {
        Path f = data.resolve("f");
        Files.writeString(f, "a\n");
        Path latch = tmp.resolve("latch");
        Path leftoverPid = tmp.resolve("leftover.pid");
        assertThat(new ProcessBuilder("mkfifo", latch.toString()).start().waitFor())
                .isZero();
        try (CliProcess p = update(
                f,
                "sh",
                "-c",
                "cat; echo b; (exec 3<>\"$1\"; read x <&3; echo LATE) & echo $! > \"$2\"",
                "sh",
                latch.toString(),
                leftoverPid.toString())) {
            assertThat(p.exitCode()).as(p.err()).isZero();
            assertThat(p.err()).contains("stopping what COMMAND left running");
        }
        long pid = Long.parseLong(Files.readString(leftoverPid).trim());
        boolean survived = RunProcessTest.running(pid);
        if (survived) {
            try (java.io.RandomAccessFile w = new java.io.RandomAccessFile(latch.toFile(), "rw")) {
                w.write("go\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            org.awaitility.Awaitility.await().atMost(Timing.seconds(20)).until(() -> !RunProcessTest.running(pid));
        }
        assertThat(Files.readString(f)).isEqualTo("a\nb\n");
        assertThat(survived)
                .as("COMMAND's background child still ran after update exited")
                .isFalse();
    }

    /**
     * A reader of FILE's directory holding a shared flock on it (what {@code flock -s DIR ...}
     * does) used to freeze the update forever, silently. Now the update says who blocks it, and
     * goes on once that lock is gone.
     */
    @Test
    void directoryFlockedByAReader_updateSaysWhoBlocksIt_andGoesOnOnceFree() throws Exception {
        Path f = data.resolve("f");
        Files.writeString(f, "1\n");
        Process holder = new ProcessBuilder("flock", "-s", data.toString(), "sh", "-c", "echo ready; read x").start();
        try (CliProcess p = update(f, "sh", "-c", "read n; echo $((n + 1))")) {
            assertThat(new String(holder.getInputStream().readNBytes(6), java.nio.charset.StandardCharsets.UTF_8))
                    .isEqualTo("ready\n");
            org.awaitility.Awaitility.await()
                    .atMost(Timing.seconds(20))
                    .until(() -> p.err().contains("waiting for the flock(2) on " + data.toRealPath()));
            assertThat(p.err()).contains("held by a shared lock of pid " + holder.pid() + " (flock, user ");
            holder.getOutputStream().close();
            assertThat(p.exitCode()).as(p.err()).isZero();
        } finally {
            holder.destroyForcibly();
        }
        assertThat(Files.readString(f)).isEqualTo("2\n");
    }

    /** A real path that makes no valid default lock name (a control character) used to be refused without saying how to go on. */
    @Test
    void pathThatMakesNoLockName_isRefusedSuggestingLock_andWorksWithIt() throws Exception {
        Path f = data.resolve("tab\there");
        try (CliProcess p = update(f, "sh", "-c", "echo new")) {
            assertThat(p.exitCode()).isEqualTo(64);
            assertThat(p.err()).contains("default lock name").contains("--lock NAME");
        }
        List<String> args =
                List.of("update", "--backend", backend, "--lock", "tabbed", f.toString(), "--", "sh", "-c", "echo new");
        try (CliProcess p = CliProcess.start(List.of(), Map.of(), args.toArray(new String[0]))) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("new\n");
    }
}
