package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@link FastPath} against picocli: the same fields for every line it accepts, picocli for every
 * line it does not, and the same output and exit status for the lines that fail after parsing.
 */
class FastPathTest {
    @TempDir
    Path tmp;

    Path home;
    final Map<String, String> vars = new HashMap<>();

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectory(tmp.resolve("home"));
    }

    Env env() {
        return new Env(vars, home, Env.currentUid(), tmp);
    }

    /** What picocli makes of a {@code run} line: the command object it filled in. */
    static RunCommand picocliRun(String... args) {
        RunCommand run = new RunCommand();
        CommandLine cmd = new CommandLine(new InterlockCommand(null, null));
        cmd.addSubcommand(run);
        cmd.parseArgs(args);
        return run;
    }

    static StatusCommand picocliStatus(String... args) {
        StatusCommand status = new StatusCommand();
        CommandLine cmd = new CommandLine(new InterlockCommand(null, null));
        cmd.addSubcommand(status);
        cmd.parseArgs(args);
        return status;
    }

    static String describe(RunCommand c) {
        return "shared=" + c.shared + " noWait=" + c.waiting.noWait + " wait=" + c.waiting.wait + " E="
                + c.waiting.conflictExitCode
                + " quiet=" + c.waiting.quiet + " backend=" + c.backend.uri + " lease=" + c.lease + " holdAtLeast="
                + c.holdAtLeast + " limit=" + c.limit + " verbose=" + c.verbosity.verbose + " name=" + c.name
                + " command=" + c.command;
    }

    static String describe(StatusCommand c) {
        return "json=" + c.json + " backend=" + c.backend.uri + " verbose=" + c.verbosity.verbose + " names=" + c.names;
    }

    @Test
    void run_acceptedLines_getTheFieldsPicocliGives() {
        List<String[]> lines = List.of(
                new String[] {"run", "x", "--", "true"},
                new String[] {"run", "-s", "-n", "-q", "-v", "x", "--", "sh", "-c", "exit 3"},
                new String[] {"run", "--shared", "--no-wait", "--quiet", "--verbose", "x", "--", "true"},
                new String[] {"run", "-w", "5m", "-E", "3", "--backend", "flock:/tmp/l", "x", "--", "a", "--", "b"},
                new String[] {"run", "--wait=1h30m", "--conflict-exit-code=0", "--backend=dir:/a=b", "x", "--", "true"},
                new String[] {"run", "--lease", "2.5", "--hold-at-least", "1m", "job", "--", "./job.sh", "-x"},
                new String[] {"run", "x", "-n", "--", "true"},
                new String[] {"run", "-E", " 255 ", "x", "--", "true"},
                new String[] {"run", "--limit", "3", "-n", "imports", "--", "./import.sh"},
                new String[] {"run", "--limit=10000", "x", "--", "true"},
                new String[] {"run", "", "--", "true"},
                new String[] {"run", "r\u00e9sum\u00e9", "--", "run", "--help"});
        for (String[] args : lines) {
            RunCommand fast = FastPath.parseRun(args);
            assertThat(fast).as(String.join(" ", args)).isNotNull();
            assertThat(describe(fast)).as(String.join(" ", args)).isEqualTo(describe(picocliRun(args)));
        }
    }

    @Test
    void run_linesForPicocli_areLeftToIt() {
        List<String[]> lines = List.of(
                new String[] {"run"},
                new String[] {"run", "--help"},
                new String[] {"run", "-h", "x", "--", "true"},
                new String[] {"run", "-nq", "x", "--", "true"},
                new String[] {"run", "-w5m", "x", "--", "true"},
                new String[] {"run", "-n", "-n", "x", "--", "true"},
                new String[] {"run", "-w", "1s", "--wait", "2s", "x", "--", "true"},
                new String[] {"run", "-n", "-w", "1s", "x", "--", "true"},
                new String[] {"run", "-w", "5 minutes", "x", "--", "true"},
                new String[] {"run", "-E", "256", "x", "--", "true"},
                new String[] {"run", "-E", "-1", "x", "--", "true"},
                new String[] {"run", "--limit", "0", "x", "--", "true"},
                new String[] {"run", "--limit", "x", "y", "--", "true"},
                new String[] {"run", "--limit", "2", "--limit", "2", "x", "--", "true"},
                new String[] {"run", "--limit", "2", "-s", "x", "--", "true"},
                new String[] {"run", "--backend", "x", "--", "true"},
                new String[] {"run", "--backend"},
                new String[] {"run", "--shared=true", "x", "--", "true"},
                new String[] {"run", "--bogus", "x", "--", "true"},
                new String[] {"run", "x", "true"},
                new String[] {"run", "x", "--"},
                new String[] {"run", "--", "true"},
                new String[] {"run", "x", "echo", "--", "hi"});
        for (String[] args : lines) {
            assertThat(FastPath.parseRun(args)).as(String.join(" ", args)).isNull();
        }
    }

    @Test
    void status_acceptedLines_getTheFieldsPicocliGives_othersAreLeftToIt() {
        List<String[]> accepted = List.of(
                new String[] {"status", "x"},
                new String[] {"status", "--json", "-v", "--backend", "flock:/tmp/l", "a", "b"},
                new String[] {"status", "a", "--backend=flock:/x", "--verbose", "b"});
        for (String[] args : accepted) {
            StatusCommand fast = FastPath.parseStatus(args);
            assertThat(fast).as(String.join(" ", args)).isNotNull();
            assertThat(describe(fast)).as(String.join(" ", args)).isEqualTo(describe(picocliStatus(args)));
        }
        List<String[]> refused = List.of(
                new String[] {"status"},
                new String[] {"status", "--help"},
                new String[] {"status", "--json", "--json", "x"},
                new String[] {"status", "--", "x"},
                new String[] {"status", "--backend"},
                new String[] {"status", "-x", "a"});
        for (String[] args : refused) {
            assertThat(FastPath.parseStatus(args)).as(String.join(" ", args)).isNull();
        }
    }

    @Test
    void otherCommands_areLeftToPicocli() {
        for (String[] args : List.of(
                new String[0],
                new String[] {"list"},
                new String[] {"-v", "run", "x", "--", "true"},
                new String[] {"--version", "x"},
                new String[] {"help", "list"},
                new String[] {"--help", "run"},
                new String[] {"list", "--help"},
                new String[] {"completion"},
                new String[] {"completion", "fish"},
                new String[] {"completion", "-v", "bash"})) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertThat(FastPath.execute(env(), null, args, new PrintWriter(out), new PrintWriter(err)))
                    .as(String.join(" ", args))
                    .isEqualTo(FastPath.NOT_HANDLED);
            assertThat(out.toString() + err).isEmpty();
        }
    }

    /** The exit status and the output of both paths, for lines that parse but fail when run. */
    @Test
    void failuresAfterParsing_printTheSameAsPicocli() throws IOException {
        Path locks = Files.createDirectories(tmp.resolve("locks"));
        Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");
        List<String[]> lines = List.of(
                new String[] {"run", "--backend", "flock:" + locks, "a/../b", "--", "true"},
                new String[] {"run", "--backend", "flock:" + locks, "", "--", "true"},
                new String[] {"run", "--backend", "nosuch:x", "x", "--", "true"},
                new String[] {"run", "--backend", "flock:" + file, "x", "--", "true"},
                new String[] {"run", "--backend", "flock:" + locks, "--lease", "0", "x", "--", "true"},
                new String[] {
                    "run",
                    "--backend",
                    "flock:" + locks,
                    "x",
                    "--",
                    tmp.resolve("missing").toString()
                },
                new String[] {"status", "--backend", "flock:" + tmp.resolve("absent"), "x"},
                new String[] {"status", "--backend", "flock:" + locks, "--json", "x", ""},
                new String[] {"status", "--backend", "flock:" + locks, "x"},
                new String[] {"--version"},
                new String[] {"-V"},
                new String[] {"completion", "bash"},
                new String[] {"completion", "zsh"});
        for (String[] args : lines) {
            StringWriter fastOut = new StringWriter();
            StringWriter fastErr = new StringWriter();
            int fast =
                    FastPath.execute(env(), null, args, new PrintWriter(fastOut, true), new PrintWriter(fastErr, true));
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cmd = Main.commandLine(env(), null, args);
            cmd.setOut(new PrintWriter(out, true));
            cmd.setErr(new PrintWriter(err, true));
            int picocli = cmd.execute(args);
            String line = String.join(" ", args);
            assertThat(fast).as(line).isNotEqualTo(FastPath.NOT_HANDLED).isEqualTo(picocli);
            assertThat(fastErr.toString()).as(line).isEqualTo(err.toString());
            assertThat(withoutTimes(fastOut.toString())).as(line).isEqualTo(withoutTimes(out.toString()));
        }
    }

    /** The help texts rendered at build time are what picocli prints, for every form that asks for them. */
    @Test
    void help_isWhatPicocliPrints() {
        String before = System.getProperty("picocli.ansi");
        System.setProperty("picocli.ansi", "false"); // as picocli decides on a pipe
        try {
            for (List<String> form : HelpTexts.FORMS.keySet()) {
                String[] args = form.toArray(new String[0]);
                StringWriter fastOut = new StringWriter();
                StringWriter fastErr = new StringWriter();
                int fast = FastPath.execute(
                        env(), null, args, new PrintWriter(fastOut, true), new PrintWriter(fastErr, true));
                StringWriter out = new StringWriter();
                CommandLine cmd = Main.commandLine(env(), null, args);
                cmd.setOut(new PrintWriter(out, true));
                int picocli = cmd.execute(args);
                assertThat(fast).as(String.join(" ", args)).isEqualTo(picocli).isEqualTo(0);
                assertThat(fastOut.toString())
                        .as(String.join(" ", args))
                        .isEqualTo(out.toString())
                        .contains("Usage: interlock");
                assertThat(fastErr.toString()).isEmpty();
            }
        } finally {
            if (before == null) {
                System.clearProperty("picocli.ansi");
            } else {
                System.setProperty("picocli.ansi", before);
            }
        }
    }

    /** The help's colour rule, against made-up environments and both answers of the terminal. */
    @Test
    void colours_followPicoclisRule() {
        java.util.function.BooleanSupplier tty = () -> true;
        java.util.function.BooleanSupplier pipe = () -> false;
        assertThat(FastPath.colours(null, Map.of(), tty)).isTrue();
        assertThat(FastPath.colours(null, Map.of(), pipe)).isFalse();
        assertThat(FastPath.colours("auto", Map.of("NO_COLOR", ""), tty)).isFalse();
        assertThat(FastPath.colours(null, Map.of("NO_COLOR", "1", "CLICOLOR_FORCE", "1"), tty))
                .isFalse();
        assertThat(FastPath.colours(null, Map.of("CLICOLOR_FORCE", "1"), pipe)).isTrue();
        assertThat(FastPath.colours(null, Map.of("CLICOLOR_FORCE", "0"), pipe)).isFalse();
        assertThat(FastPath.colours(null, Map.of("CLICOLOR", "0"), tty)).isFalse();
        assertThat(FastPath.colours(null, Map.of("ConEmuANSI", "OFF"), tty)).isFalse();
        assertThat(FastPath.colours("tty", Map.of("CLICOLOR_FORCE", "1"), pipe)).isFalse();
        assertThat(FastPath.colours("TTY", Map.of(), tty)).isTrue();
        assertThat(FastPath.colours("true", Map.of("NO_COLOR", "1"), pipe)).isTrue();
        assertThat(FastPath.colours("false", Map.of("CLICOLOR_FORCE", "1"), tty))
                .isFalse();
    }

    /**
     * The same rule in real processes, each answering with the tool's rule and picocli's own
     * check: every variable and property picocli reads, output to a pipe, and (through
     * util-linux's {@code script}, where present) to a terminal.
     */
    @Test
    void colours_agreeWithPicocli_inRealProcesses() throws Exception {
        List<Map<String, String>> envs = List.of(
                Map.of(),
                Map.of("NO_COLOR", "1"),
                Map.of("CLICOLOR_FORCE", "1"),
                Map.of("CLICOLOR_FORCE", "0"),
                Map.of("CLICOLOR", "0"),
                Map.of("ConEmuANSI", "OFF"),
                Map.of("NO_COLOR", "1", "CLICOLOR_FORCE", "1"));
        List<List<String>> props = List.of(
                List.of(),
                List.of("-Dpicocli.ansi=true"),
                List.of("-Dpicocli.ansi=false"),
                List.of("-Dpicocli.ansi=tty"),
                List.of("-Dpicocli.ansi=AUTO"));
        boolean script = new java.io.File("/usr/bin/script").canExecute();
        int checked = 0;
        for (Map<String, String> env : envs) {
            for (List<String> jvm : props) {
                for (boolean terminal : script ? new boolean[] {false, true} : new boolean[] {false}) {
                    if (terminal && !jvm.isEmpty() && !env.isEmpty()) {
                        continue; // the terminal matters where nothing else decides
                    }
                    ProcessBuilder pb = dev.interlock.testkit.ChildJvm.builder(ColoursProbe.class, jvm);
                    for (String v : List.of("NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "ConEmuANSI")) {
                        pb.environment().remove(v);
                    }
                    pb.environment().putAll(env);
                    if (terminal) {
                        pb.command(List.of("/usr/bin/script", "-qec", shellQuoted(pb.command()), "/dev/null"));
                    }
                    pb.redirectErrorStream(true);
                    Process p = pb.start();
                    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                    assertThat(p.waitFor()).as(out).isZero();
                    String[] answers =
                            out.lines().reduce((a, b) -> b).orElse("").trim().split(" ");
                    assertThat(answers)
                            .as("env %s, %s, terminal %s: %s", env, jvm, terminal, out)
                            .hasSize(2);
                    assertThat(answers[0])
                            .as("env %s, %s, terminal %s", env, jvm, terminal)
                            .isEqualTo(answers[1]);
                    checked++;
                }
            }
        }
        assertThat(checked).isGreaterThanOrEqualTo(envs.size() * props.size());
    }

    private static String shellQuoted(List<String> words) {
        StringBuilder b = new StringBuilder();
        for (String w : words) {
            b.append(b.length() == 0 ? "" : " ")
                    .append('\'')
                    .append(w.replace("'", "'\\''"))
                    .append('\'');
        }
        return b.toString();
    }

    /**
     * The launcher's training run also loads what {@code status} and {@code --help} load, for the
     * start-up archive: a class missing from it is read from the jar, which opens the jar first.
     */
    @Test
    void trainingRun_alsoLoadsStatus() throws Exception {
        Path locks = Files.createDirectories(tmp.resolve("locks"));
        Path log = tmp.resolve("classes.log");
        List<String> jvm = List.of("-Xlog:class+load=info:file=" + log, "-Dinterlock.cli.training=true");
        try (CliProcess p = CliProcess.start(jvm, Map.of(), "run", "--backend", "flock:" + locks, "x", "--", "true")) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
            assertThat(p.out()).isEmpty();
        }
        assertThat(Files.readString(log, StandardCharsets.UTF_8))
                .contains("dev.interlock.cli.LockTable ")
                .contains("dev.interlock.cli.Main$WarmProcLocks ")
                .contains("dev.interlock.cli.HelpTexts ");
    }

    private static String withoutTimes(String s) {
        return s.replaceAll("\"now\":\"[^\"]*\"", "\"now\":\"\"");
    }

    /**
     * What a {@code run} loads, in a real process: not picocli, not slf4j (it logs nothing the tool
     * shows), not the calendar and locale data of a date format nobody shows, and no child process
     * before the command's own (JNA's {@code ldconfig -p}).
     */
    @Test
    void run_loadsNeitherPicocliNorSlf4jNorCalendarsNorSpawnsLdconfig() throws Exception {
        Path locks = Files.createDirectories(tmp.resolve("locks"));
        Path log = tmp.resolve("classes.log");
        List<String> jvm = new ArrayList<>(List.of("-Xlog:class+load=info:file=" + log));
        try (CliProcess p = CliProcess.start(jvm, Map.of(), "run", "--backend", "flock:" + locks, "x", "--", "true")) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
        }
        String loaded = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(loaded)
                .contains("dev.interlock.cli.FastPath ")
                .doesNotContain("picocli.CommandLine ")
                .doesNotContain("org.slf4j.LoggerFactory ")
                .doesNotContain("java.util.GregorianCalendar ")
                .doesNotContain("java.lang.ProcessBuilder ");
    }

    /** slf4j left unstarted still shows every warning: a lock directory any user can write. */
    @Test
    void run_withoutVerbose_stillWarns() throws Exception {
        Path locks = Files.createDirectories(tmp.resolve("open-locks"));
        Files.setPosixFilePermissions(locks, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        try (CliProcess p =
                CliProcess.start(List.of(), Map.of(), "run", "--backend", "flock:" + locks, "x", "--", "true")) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
            assertThat(p.err()).contains("[WARN]").contains("is writable by every user");
        }
    }

    /** {@code --verbose}, or a level given to a logger of ours, shows the debug lines. */
    @Test
    void run_verboseOrALoggerLevel_showsDebugLines() throws Exception {
        Path locks = Files.createDirectories(tmp.resolve("locks"));
        try (CliProcess p = CliProcess.start(
                List.of(), Map.of(), "run", "--verbose", "--backend", "flock:" + locks, "x", "--", "true")) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
            assertThat(p.err()).contains("[DEBUG]").contains("acquired 'x'").contains("started pid");
        }
        List<String> jvm = List.of("-Dorg.slf4j.simpleLogger.log.dev.interlock.internal=debug");
        try (CliProcess p = CliProcess.start(jvm, Map.of(), "run", "--backend", "flock:" + locks, "x", "--", "true")) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
            assertThat(p.err()).contains("[DEBUG]").contains("acquired 'x'").doesNotContain("started pid");
        }
    }
}
