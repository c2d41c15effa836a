package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** {@code interlock verify} in-process: bad options and unusable backends are refused before any worker starts. */
class VerifyCommandTest {
    @TempDir
    Path tmp;

    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    int verify(String... args) {
        CommandLine cmd = Main.commandLine(new Env(new HashMap<>(), tmp, Env.currentUid(), tmp), null);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 1];
        all[0] = "verify";
        System.arraycopy(args, 0, all, 1, args.length);
        return cmd.execute(all);
    }

    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of(List.of("--processes", "1"), "--processes must be at least 2 on one host"),
                Arguments.of(List.of("--processes", "0"), "--processes must be between 1 and 256, was 0"),
                Arguments.of(List.of("--duration", "10ms"), "--duration must be between 100ms and 24h, was 10ms"),
                Arguments.of(List.of("--duration", "soon"), "'soon' is not a duration"),
                Arguments.of(List.of("--shared-ratio", "1"), "--shared-ratio must be at least 0 and below 1"),
                Arguments.of(List.of("--shared-ratio", "-0.5"), "--shared-ratio must be at least 0 and below 1"),
                Arguments.of(List.of("--lease", "5ms"), "--lease must be at least 100ms"),
                Arguments.of(List.of("--name", "a\nb"), "bad lock name"),
                Arguments.of(List.of("--lead", "r1"), "--lead needs --hosts K"),
                Arguments.of(List.of("--hosts", "2"), "--hosts goes with --lead"),
                Arguments.of(
                        List.of("--lead", "r1", "--hosts", "2", "--join", "r1"),
                        "--lead and --join exclude each other"),
                Arguments.of(List.of("--join", "../up"), "bad RUN-ID '../up'"),
                Arguments.of(
                        List.of("--join", "r1", "--name", "x"),
                        "--join takes the lock name and the duration from the lead's plan"),
                Arguments.of(List.of("--shared-dir", "/tmp"), "--shared-dir goes with --lead or --join"),
                Arguments.of(List.of("--backend", "mem:x", "--join", "r1"), "--join on mem: needs --shared-dir DIR"),
                Arguments.of(
                        List.of("--limit", "2", "--shared-ratio", "0.25"),
                        "--shared-ratio does not go with --limit: a semaphore permit has one holder"),
                Arguments.of(
                        List.of("--limit", "3", "--processes", "3"),
                        "--processes must be more than --limit 3 on one host, was 3"),
                Arguments.of(List.of("--limit", "0"), "1-10000"),
                Arguments.of(List.of("--limit", "x"), "1-10000"),
                Arguments.of(
                        List.of("--join", "r1", "--limit", "2", "--shared-dir", "/tmp"),
                        "--join takes the limit from the lead's plan"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("usageErrors")
    void badOptions_are64_andSayWhatToFix(List<String> args, String message) {
        assertThat(verify(args.toArray(new String[0]))).as(err.toString()).isEqualTo(64);
        assertThat(err.toString())
                .startsWith("interlock: ")
                .contains(message)
                .contains("interlock verify --help")
                .doesNotContainPattern("[A-Za-z]+(Exception|Error)\\b");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void keep_mustBeNewOrEmpty() throws IOException {
        Path full = Files.createDirectory(tmp.resolve("full"));
        Files.writeString(full.resolve("x"), "x");
        assertThat(verify("--keep", full.toString())).isEqualTo(64);
        assertThat(err.toString()).contains("--keep " + full + " exists and is not an empty directory");
    }

    @Test
    void aMissingDirectory_is69_withTheBackendsReason() {
        Path missing = tmp.resolve("no/such/dir");
        assertThat(verify("--backend", "flock:" + missing)).isEqualTo(69);
        assertThat(err.toString())
                .startsWith("interlock: flock:" + missing + " - lock directory " + missing + " does not exist");
    }

    @Test
    void aBackendThatCannotLock_is69_withTheReason() {
        assertThat(verify("--backend", "broken:unusable")).isEqualTo(69);
        assertThat(err.toString())
                .startsWith("interlock: cannot lock 'interlock-verify-")
                .contains(
                        "on broken:unusable: broken:unusable - connection refused by the lock server (is it running?)");
    }

    @Test
    void limit_onABackendWithoutSemaphores_is69_beforeAnyWorkerStarts() throws IOException {
        assertThat(verify("--backend", "broken:unusable", "--limit", "2")).isEqualTo(69);
        assertThat(err.toString()).contains("semaphores (--limit) are not supported by broken:unusable yet");
    }

    @Test
    void anUnknownScheme_is64() {
        assertThat(verify("--backend", "nosuch:x")).isEqualTo(64);
        assertThat(err.toString()).contains("no backend for scheme 'nosuch:'");
    }

    @Test
    void joiningARunThatNeverStarts_givesUpAfterTheJoinTimeout_withWhatToDo() throws IOException {
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        assertThat(verify(
                        "--backend",
                        "flock:" + tmp.resolve("locks"),
                        "--join",
                        "r9",
                        "--shared-dir",
                        shared.toString(),
                        "--join-timeout",
                        "300ms"))
                .isEqualTo(1);
        assertThat(err.toString())
                .contains("no run r9 in " + shared + " after 300ms: start 'interlock verify --lead r9 --hosts K'");
    }

    @Test
    void aRunIdInUse_isRefused() throws IOException {
        Path shared = Files.createDirectories(tmp.resolve("shared/r1"));
        assertThat(verify(
                        "--backend",
                        "flock:" + tmp.resolve("locks"),
                        "--lead",
                        "r1",
                        "--hosts",
                        "2",
                        "--shared-dir",
                        shared.getParent().toString()))
                .isEqualTo(64);
        assertThat(err.toString())
                .contains("run r1 already exists in " + shared.getParent() + ": choose another RUN-ID");
    }

    /** A mistyped --shared-dir used to be created with its parents, and the lead then waited 2 minutes for hosts that never saw it. */
    @Test
    void aMissingSharedDir_isRefusedAtOnce_andNotCreated() {
        Path missing = tmp.resolve("typo/shared");
        assertThat(verify(
                        "--backend",
                        "flock:" + tmp.resolve("locks"),
                        "--lead",
                        "r1",
                        "--hosts",
                        "2",
                        "--shared-dir",
                        missing.toString()))
                .isEqualTo(64);
        assertThat(err.toString()).contains("--shared-dir " + missing + " is not a directory");
        assertThat(tmp.resolve("typo")).doesNotExist();
    }

    /**
     * Issue 26, 9: a lead whose other hosts never came exited 1 and left its run directory (and
     * the next lead of that RUN-ID was then refused: "already exists").
     */
    @Test
    void aLeadWhoseHostsNeverCome_removesItsRunDirectory_andSaysSo() throws IOException {
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        assertThat(verify(
                        "--backend",
                        "flock:" + tmp.resolve("locks"),
                        "--lead",
                        "r1",
                        "--hosts",
                        "2",
                        "--processes",
                        "1",
                        "--shared-dir",
                        shared.toString(),
                        "--join-timeout",
                        "300ms",
                        "--duration",
                        "100ms"))
                .as(err.toString())
                .isEqualTo(1);
        assertThat(err.toString())
                .contains("only 1 of 2 hosts of run r1 were ready after 300ms")
                .contains("the run directory " + shared.resolve("r1") + " was removed");
        assertThat(shared.resolve("r1")).doesNotExist();
        assertThat(shared).exists();
    }
}
