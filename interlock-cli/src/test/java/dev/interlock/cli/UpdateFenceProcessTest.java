package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock update --token T}: fenced writes from the shell (exit 77 when a newer token
 * already landed), bad tokens, file systems that cannot carry a token; and temporary files of a
 * live update that another update of the same file (under another lock name) must not remove.
 */
class UpdateFenceProcessTest {
    @TempDir
    Path tmp;

    Path data;
    String backend;

    @BeforeEach
    void setUp() throws Exception {
        backend = "flock:" + Files.createDirectory(tmp.resolve("locks"));
        data = Files.createDirectory(tmp.resolve("data"));
    }

    private CliProcess update(List<String> options, Path file, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("update", "--backend", backend));
        args.addAll(options);
        args.addAll(List.of(file.toString(), "--"));
        args.addAll(List.of(command));
        return CliProcess.start(List.of(), Map.of(), args.toArray(new String[0]));
    }

    private List<String> temps() throws IOException {
        try (Stream<Path> s = Files.list(data)) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.contains("interlock") && n.endsWith(".tmp"))
                    .toList();
        }
    }

    private static String fence(Path f) throws IOException {
        UserDefinedFileAttributeView view = Files.getFileAttributeView(f, UserDefinedFileAttributeView.class);
        if (!view.list().contains("interlock.fence")) {
            return null;
        }
        ByteBuffer buf = ByteBuffer.allocate(64);
        view.read("interlock.fence", buf);
        return new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII);
    }

    @Test
    void token_olderThanTheFiles_exits77_namingBoth_fileUnchanged() throws Exception {
        Path f = data.resolve("f");
        try (CliProcess p = update(List.of("--token", "5"), f, "sh", "-c", "echo five")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(fence(f)).isEqualTo("5");
        try (CliProcess p = update(List.of("--token", "4"), f, "sh", "-c", "echo four")) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(77);
            assertThat(p.err())
                    .contains("fencing token 4")
                    .contains("token 5 already landed")
                    .contains("is unchanged")
                    .doesNotContain("Exception");
        }
        assertThat(Files.readString(f)).isEqualTo("five\n");
        try (CliProcess p = update(List.of("--token", "5"), f, "sh", "-c", "echo five again")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        try (CliProcess p = update(List.of(), f, "sh", "-c", "echo unfenced")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("unfenced\n");
        assertThat(fence(f)).as("an unfenced update keeps the token").isEqualTo("5");
        assertThat(temps()).isEmpty();
    }

    @Test
    void badToken_exits64_beforeCommandRuns() throws Exception {
        Path f = data.resolve("f");
        Path ran = tmp.resolve("ran");
        for (String bad : new String[] {"", "abc", "1.5", "99999999999999999999"}) {
            try (CliProcess p = update(List.of("--token", bad), f, "sh", "-c", "touch \"$0\"", ran.toString())) {
                assertThat(p.exitCode()).as(p.err()).isEqualTo(64);
                assertThat(p.err())
                        .contains("--token")
                        .contains("fencing token")
                        .doesNotContain("Exception");
            }
        }
        assertThat(ran).doesNotExist();
        assertThat(f).doesNotExist();
    }

    /** A file system without user xattrs cannot carry the token: exit 73 before COMMAND runs, never an unfenced write. */
    @Test
    void fileSystemWithoutUserXattrs_exits73_beforeCommandRuns() throws Exception {
        assumeTrue(canUnshare(), "needs unshare -rm");
        Path d = Files.createDirectory(tmp.resolve("ramfs"));
        Path ran = tmp.resolve("ran");
        List<String> prefix = List.of(
                "unshare",
                "-rm",
                "sh",
                "-c",
                "mount -t ramfs none \"$0\" && printf old > \"$0/f\" && exec \"$@\"",
                d.toString());
        try (CliProcess p = CliProcess.startWrapped(
                prefix,
                List.of(),
                "update",
                "--backend",
                backend,
                "--token",
                "3",
                d.resolve("f").toString(),
                "--",
                "sh",
                "-c",
                "touch \"$0\"",
                ran.toString())) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(73);
            assertThat(p.err())
                    .contains("keeps no user extended attributes")
                    .contains("is unchanged")
                    .doesNotContain("Exception");
        }
        assertThat(ran).doesNotExist();
    }

    private static boolean canUnshare() {
        try {
            Process p = new ProcessBuilder("unshare", "-rm", "true")
                    .redirectErrorStream(true)
                    .start();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /**
     * Two updates of one file under different lock names: the second must not take the first's
     * temporary file for a crashed writer's leftover (its writer lives: it holds its flock), so the
     * first still lands. Before, any file of the pattern was removed, and the first failed with 73.
     */
    @Test
    void liveUpdatesTemporaryFile_isNotRemovedByAnotherUpdate() throws Exception {
        Path f = Files.writeString(data.resolve("f"), "0\n");
        Path go = tmp.resolve("go");
        assertThat(new ProcessBuilder("mkfifo", go.toString())
                        .inheritIO()
                        .start()
                        .waitFor())
                .isZero();
        try (CliProcess first = update(
                List.of("--lock", "a"), f, "sh", "-c", "cat > /dev/null; echo first; read x < \"$0\"", go.toString())) {
            long deadline = System.nanoTime() + Timing.seconds(30).toNanos();
            while (temps().isEmpty()) {
                assertThat(System.nanoTime())
                        .as("the first update's temporary file appears")
                        .isLessThan(deadline);
                Thread.onSpinWait();
            }
            try (CliProcess second = update(List.of("--lock", "b"), f, "sh", "-c", "echo second")) {
                assertThat(second.exitCode()).as(second.err()).isZero();
                assertThat(second.err()).doesNotContain("removed");
            }
            assertThat(Files.readString(f)).isEqualTo("second\n");
            CompletableFuture.runAsync(() -> {
                        try (OutputStream out = Files.newOutputStream(go)) {
                            out.write("go\n".getBytes(StandardCharsets.UTF_8));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .get(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(first.exitCode()).as(first.err()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("first\n");
        assertThat(temps()).isEmpty();
    }
}
