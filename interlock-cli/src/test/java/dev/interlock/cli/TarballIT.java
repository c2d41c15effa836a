package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release tarball the build just made (target/interlock-VERSION.tar.gz), unpacked as a user
 * would: its man page shows every command, and its bash completion, sourced from where the
 * tarball puts it, completes through the installed launcher.
 */
class TarballIT {
    @TempDir
    Path tmp;

    @Test
    void unpacked_manPageShowsEveryCommand_andCompletionWorksThroughTheInstalledLauncher() throws Exception {
        Path tarball;
        try (Stream<Path> s = Files.list(Path.of("target"))) {
            tarball = s.filter(p -> p.getFileName().toString().matches("interlock-.+\\.tar\\.gz"))
                    .findFirst()
                    .orElseThrow(
                            () -> new AssertionError("no target/interlock-VERSION.tar.gz: the package phase makes it"));
        }
        assertThat(run(Map.of(), "tar", "xzf", tarball.toAbsolutePath().toString(), "-C", tmp.toString()))
                .isEmpty();
        Path home;
        try (Stream<Path> s = Files.list(tmp)) {
            home = s.findFirst().orElseThrow();
        }
        Path page = home.resolve("share/man/man1/interlock.1");
        Path completion = home.resolve("share/bash-completion/completions/interlock");
        assertThat(page).isRegularFile();
        assertThat(completion).isRegularFile();
        if (Files.isExecutable(Path.of("/usr/bin/man"))) {
            String shown =
                    run(Map.of("MANPAGER", "cat", "PAGER", "cat", "MANWIDTH", "100"), "man", "-l", page.toString());
            for (String c : CompletionAndManPageTest.COMMANDS) {
                assertThat(shown).as(c).contains("interlock " + c);
            }
        } else {
            assertThat(Files.readString(page)).contains(".SS \"interlock run\"");
        }
        Path locks = Files.createDirectory(tmp.resolve("locks"));
        Map<String, String> env = Map.of(
                "PATH",
                home.resolve("bin") + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"),
                "INTERLOCK_NO_TRAIN",
                "1"); // no training left running in the background after the test
        run(
                env,
                home.resolve("bin/interlock").toString(),
                "run",
                "--backend",
                "flock:" + locks,
                "nightly",
                "--",
                "true");
        String script = "source " + completion + "\n"
                + "t() { COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(( $# - 1 ));"
                + " COMPREPLY=(); _interlock_complete 2>/dev/null; local IFS='|'; echo \"${COMPREPLY[*]}\"; }\n"
                + "t 'interlock ru' interlock ru\n"
                + "t 'interlock run --ba' interlock run --ba\n"
                + "t 'interlock status --backend flock:" + locks + " n' interlock status --backend flock : " + locks
                + " n\n";
        assertThat(run(env, "bash", "-c", script)).isEqualTo("run\n--backend\nnightly\n");
    }

    /** Runs a command to its end; its standard output. */
    private static String run(Map<String, String> env, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS))
                .as(List.of(command).toString())
                .isTrue();
        assertThat(p.exitValue()).as(List.of(command) + ": " + out).isZero();
        return out;
    }
}
