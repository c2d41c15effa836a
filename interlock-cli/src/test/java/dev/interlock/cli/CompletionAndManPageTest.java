package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell completion script ({@code interlock completion bash}) as bash runs it, and the man page,
 * both generated from the command model by the build.
 */
class CompletionAndManPageTest {
    static final List<String> COMMANDS = List.of("run", "update", "status", "list", "break", "verify", "completion");

    @TempDir
    Path tmp;

    @Test
    void completionScript_namesEveryCommandAndItsOptions() throws Exception {
        String script;
        try (CliProcess p = CliProcess.start("completion", "bash")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
            script = p.out();
        }
        for (String c : COMMANDS) {
            assertThat(script).as(c).contains("_picocli_interlock_" + c + "()");
        }
        assertThat(script)
                .contains("'--backend'")
                .contains("'--no-wait'")
                .contains("'--hold-at-least'")
                .contains("'--names'")
                .contains("\"flock:\" \"dir:\"")
                .contains("\"redis://\"")
                .contains("\"mem:\"")
                .contains("complete -F _interlock_complete -o default interlock");
        try (CliProcess zsh = CliProcess.start("completion", "zsh")) {
            assertThat(zsh.exitCode()).isZero();
            assertThat(zsh.out()).isEqualTo(script).contains("bashcompinit");
        }
        try (CliProcess fish = CliProcess.start("completion", "fish")) {
            assertThat(fish.exitCode()).isEqualTo(64);
            assertThat(fish.err()).contains("no completion for 'fish': use bash or zsh");
        }
    }

    /**
     * What bash's TAB gives, through the script and an {@code interlock} on the PATH: COMP_WORDS as
     * bash splits the line (at blanks and at the colon of a URI), COMP_LINE and COMP_POINT.
     */
    @Test
    void bash_completesCommandsOptionsSchemesAndLockNames() throws Exception {
        Path bin = Files.createDirectory(tmp.resolve("bin"));
        List<String> jvm =
                dev.interlock.testkit.ChildJvm.builder(Main.class, List.of()).command();
        StringBuilder wrapper = new StringBuilder("#!/bin/sh\nexec");
        for (String word : jvm) {
            wrapper.append(" '").append(word.replace("'", "'\\''")).append('\'');
        }
        wrapper.append(" \"$@\"\n");
        Path interlock = Files.writeString(bin.resolve("interlock"), wrapper.toString());
        Files.setPosixFilePermissions(interlock, PosixFilePermissions.fromString("rwx------"));
        Path locks = Files.createDirectory(tmp.resolve("locks"));
        for (String name : List.of("nightly", "night-audit", "catalog")) {
            try (CliProcess p = CliProcess.start("run", "--backend", "flock:" + locks, name, "--", "true")) {
                assertThat(p.exitCode()).as(p.err()).isZero();
            }
        }
        String script = "source <(interlock completion bash)\ntype _interlock_complete >/dev/null || exit 9\n"
                + "t() { COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(( $# - 1 ));"
                + " COMPREPLY=(); _interlock_complete 2>/dev/null; local IFS='|'; echo \"${COMPREPLY[*]}\"; }\n"
                + "t 'interlock ru' interlock ru\n"
                + "t 'interlock run --ba' interlock run --ba\n"
                + "t 'interlock run --backend fl' interlock run --backend fl\n"
                + "t 'interlock update -' interlock update -\n"
                + "t 'interlock run --backend flock:" + locks + " nig' interlock run --backend flock : " + locks
                + " nig\n"
                + "t 'interlock status --backend=flock:" + locks + " c' interlock status --backend = flock : " + locks
                + " c\n"
                + "t 'interlock run --backend flock:" + locks + " nightly -- ' interlock run --backend flock : " + locks
                + " nightly -- ''\n";
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("PATH", bin + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        Process bash = pb.start();
        bash.getOutputStream().close();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bash.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(bash.exitValue()).as(out).isZero();
        List<String> lines = List.of(out.split("\n", -1));
        assertThat(lines.get(0)).isEqualTo("run");
        assertThat(lines.get(1)).isEqualTo("--backend");
        assertThat(lines.get(2)).isEqualTo("flock:");
        assertThat(List.of(lines.get(3).split("\\|")))
                .contains("-q", "--quiet", "-w", "--wait", "-n", "--lease", "--lock");
        assertThat(List.of(lines.get(4).split("\\|"))).containsExactlyInAnyOrder("nightly", "night-audit");
        assertThat(lines.get(5)).isEqualTo("catalog");
        assertThat(lines.get(6))
                .as("after '--' come COMMAND's words, not lock names")
                .isEmpty();
    }

    @Test
    void manPage_hasASectionForEveryCommand_andManShowsThem() throws Exception {
        String roff = ManPage.render("1.2.3");
        assertThat(roff).startsWith(".TH INTERLOCK 1 \"\" \"interlock 1.2.3\"");
        for (String c : COMMANDS) {
            assertThat(roff).as(c).contains(".SS \"interlock " + c + "\"");
        }
        assertThat(roff)
                .contains("\\fB\\-\\-hold\\-at\\-least\\fR \\fIDURATION\\fR")
                .contains(".SH EXIT STATUS");
        Path page = Files.writeString(tmp.resolve("interlock.1"), roff);
        if (onPath("man")) {
            List<String> cmd = new ArrayList<>(List.of("man", "-l", page.toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("MANWIDTH", "100");
            pb.environment().put("MANPAGER", "cat");
            pb.environment().put("PAGER", "cat");
            Process man = pb.start();
            String shown = new String(man.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(man.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(man.exitValue()).isZero();
            for (String c : COMMANDS) {
                assertThat(shown).as(c).contains("interlock " + c);
            }
            assertThat(shown).contains("--hold-at-least DURATION").doesNotContain("\\f");
        }
    }

    private static boolean onPath(String program) throws IOException {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }
}
