package dev.interlock.cli;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code interlock} run as another user, through setpriv(1) (the tests that use it run as root).
 * The class path is copied where that user can read it (the build's is often under root's
 * private home), once per test directory.
 */
final class OtherUser {
    private OtherUser() {}

    /** How a process ended: its status and what it wrote on stderr. */
    record Ran(int exitCode, String err) {}

    /**
     * Runs interlock with {@code args} as user {@code uid} and group {@code gid}, no other groups.
     *
     * @param tmp a directory of the test's, which the user must be able to reach
     * @param umask the umask to run under (octal, e.g. "077"), or null to keep the test's
     */
    static Ran run(Path tmp, int uid, int gid, String umask, String... args) throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "setpriv(1) is needed to run as another user");
        Path cp = tmp.resolve("cp");
        if (!Files.exists(cp)) {
            Files.createDirectory(cp);
            List<String> entries = new ArrayList<>();
            int i = 0;
            for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
                Path src = Path.of(e);
                if (!Files.exists(src)) {
                    continue;
                }
                Path dst = cp.resolve(i++ + "-" + src.getFileName());
                copyTree(src, dst);
                entries.add(dst.toString());
            }
            Files.writeString(cp.resolve("path"), String.join(java.io.File.pathSeparator, entries));
            try (Stream<Path> all = Files.walk(cp)) {
                for (Path x : (Iterable<Path>) all::iterator) {
                    Files.setPosixFilePermissions(
                            x, PosixFilePermissions.fromString(Files.isDirectory(x) ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
        }
        List<String> cmd = new ArrayList<>();
        if (umask != null) {
            cmd.addAll(List.of("/bin/sh", "-c", "umask " + umask + "; exec \"$@\"", "sh"));
        }
        cmd.addAll(List.of(
                "/usr/bin/setpriv",
                "--reuid=" + uid,
                "--regid=" + gid,
                "--clear-groups",
                "--",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                Files.readString(cp.resolve("path")),
                Main.class.getName()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        if (!p.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("interlock did not exit; stderr: " + Files.readString(err));
        }
        return new Ran(p.exitValue(), Files.readString(err));
    }

    private static void copyTree(Path src, Path dst) throws IOException {
        if (!Files.isDirectory(src)) {
            Files.copy(src, dst);
            return;
        }
        try (Stream<Path> all = Files.walk(src)) {
            for (Path x : (Iterable<Path>) all::iterator) {
                Path to = dst.resolve(src.relativize(x).toString());
                if (Files.isDirectory(x)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(x, to);
                }
            }
        }
    }
}
