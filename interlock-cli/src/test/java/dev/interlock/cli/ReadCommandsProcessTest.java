package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code status}, {@code list} and {@code break} as real processes: reading a lock space never creates one. */
class ReadCommandsProcessTest {
    @TempDir
    Path tmp;

    /** Runs interlock with {@code home} as its home directory and no $INTERLOCK_BACKEND. */
    private static CliProcess cli(Path home, String... args) throws IOException {
        return CliProcess.start(List.of("-Duser.home=" + home), Map.of(DefaultBackend.ENV, ""), args);
    }

    @Test
    void defaultBackend_inAFreshHome_readingCreatesNothing_thenRunCreatesIt() throws Exception {
        Path home = Files.createDirectory(tmp.resolve("home"));
        Path dir = home.resolve(".local/state/interlock/locks");
        for (String[] args : new String[][] {{"status", "x"}, {"list"}, {"break", "x"}}) {
            try (CliProcess p = cli(home, args)) {
                assertThat(p.exitCode()).as(String.join(" ", args)).isEqualTo(69);
                assertThat(p.err())
                        .as(String.join(" ", args))
                        .isEqualTo("interlock: no lock space at " + dir + " (nothing has been locked there yet)\n");
                assertThat(p.out()).isEmpty();
            }
        }
        try (var entries = Files.list(home)) {
            assertThat(entries).as("what reading left in the home directory").isEmpty();
        }
        try (CliProcess p = cli(home, "run", "x", "--", "true")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                .isEqualTo("rwx------");
        try (CliProcess p = cli(home, "status", "x")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
            assertThat(p.out()).contains("free");
        }
    }

    @Test
    void mistypedBackendPath_readingCreatesNothing_andSaysSo() throws Exception {
        Path home = Files.createDirectory(tmp.resolve("home"));
        Path typo = tmp.resolve("lokcs");
        String uri = "flock:" + typo;
        for (String[] args : new String[][] {
            {"status", "--backend", uri, "x"},
            {"list", "--backend", uri},
            {"break", "--backend", uri, "x"},
            {"status", "--json", "--backend", uri, "x"}
        }) {
            try (CliProcess p = cli(home, args)) {
                assertThat(p.exitCode()).as(String.join(" ", args)).isEqualTo(69);
                assertThat(p.err())
                        .as(String.join(" ", args))
                        .isEqualTo("interlock: " + uri + " - no lock space at " + typo + " (nothing was created)\n");
                assertThat(p.out()).isEmpty();
            }
        }
        assertThat(typo).doesNotExist();
    }
}
