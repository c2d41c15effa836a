package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code interlock update} as a real process: seed 002's recipe, lock → read → temp → rename → unlock. */
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
            return s.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
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
            ps.add(new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt " + rounds + " ]; do \"$0\" -XX:TieredStopAtLevel=1 -Xshare:auto -cp \"$1\" "
                    + Main.class.getName() + " update --backend \"$2\" \"$3\" -- sh -c 'read n; sleep 0.01; echo $((${n:-0} + 1))' || exit 1; i=$((i+1)); done",
                    javaBin, System.getProperty("java.class.path"), backend, counter.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        for (Process p : ps) {
            assertThat(p.waitFor(Timing.seconds(120).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
        }
        assertThat(Files.readString(counter).trim()).isEqualTo(Integer.toString(workers * rounds));
        assertThat(leftovers()).isEmpty();
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
        assertThat(Files.readString(f)).startsWith(f.toString() + " ").matches("(?s).* [0-9]+\\n");
    }

    @Test
    void modeIsKept_andSymlinkIsFollowedAndKept() throws Exception {
        Path real = data.resolve("real");
        Files.writeString(real, "a\n");
        Files.setPosixFilePermissions(real, PosixFilePermissions.fromString("rw-r-----"));
        Path link = data.resolve("link");
        Files.createSymbolicLink(link, real);
        try (CliProcess p = update(link, "sed", "s/a/b/")) {
            assertThat(p.exitCode()).isZero();
        }
        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThat(Files.readString(real)).isEqualTo("b\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(real))).isEqualTo("rw-r-----");
    }

    /** The help shows the counter example as a user must type it (picocli used to expand ${n:-0} to 0). */
    @Test
    void help_showsTheCounterExampleAsTyped() throws Exception {
        try (CliProcess p = CliProcess.start("update", "--help")) {
            assertThat(p.exitCode()).isZero();
            assertThat(p.out()).contains("  interlock update counter.txt -- sh -c 'read n; echo $((${n:-0} + 1))'\n");
        }
        try (CliProcess p = CliProcess.start("--help")) {
            assertThat(p.exitCode()).isZero();
            assertThat(p.out()).contains("  interlock update counter.txt -- sh -c 'read n; echo $((${n:-0} + 1))'\n");
        }
    }

    @Test
    void badUsage_exits64() throws Exception {
        try (CliProcess p = CliProcess.start("update", "--backend", backend, data.resolve("x").toString(), "cat")) {
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
}
