package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * Bad input and broken lock spaces get a message that says what to fix, in the tool's words:
 * never the name of a Java exception class ({@code FileAlreadyExistsException},
 * {@code FileSystemException}, {@code NoSuchFileException}...), and never a stack trace without
 * {@code -v}.
 */
class PlainMessagesTest {
    @TempDir
    static Path tmp;

    static Stream<Arguments> cases() throws IOException {
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        Path dirWithFile = Files.createDirectories(tmp.resolve("d"));
        Files.writeString(dirWithFile.resolve(".interlock-dir"), "garbage");
        Path noParent = tmp.resolve("no/such/parent");
        List<Arguments> out = new ArrayList<>();
        for (String scheme : List.of("flock:", "dir:")) {
            out.add(Arguments.of(
                    scheme + " on a regular file", List.of("run", "--backend", scheme + file, "x", "--", "true")));
            out.add(Arguments.of(
                    scheme + " under a missing parent",
                    List.of("run", "--backend", scheme + noParent, "x", "--", "true")));
            out.add(Arguments.of(
                    scheme + " status of a missing space",
                    List.of("status", "--backend", scheme + tmp.resolve("typo"), "x")));
            out.add(Arguments.of(
                    scheme + " list of a missing space", List.of("list", "--backend", scheme + tmp.resolve("typo"))));
            out.add(Arguments.of(
                    scheme + " a host in the URI", List.of("status", "--backend", scheme + "//otherhost/locks", "x")));
        }
        out.add(Arguments.of(
                "dir: with a foreign marker", List.of("run", "--backend", "dir:" + dirWithFile, "x", "--", "true")));
        out.add(Arguments.of(
                "update of a directory",
                List.of("update", "--backend", "flock:" + tmp.resolve("l"), tmp.toString(), "--", "cat")));
        out.add(Arguments.of(
                "update in a missing directory",
                List.of(
                        "update",
                        "--backend",
                        "flock:" + tmp.resolve("l"),
                        noParent.resolve("f").toString(),
                        "--",
                        "cat")));
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void errors_sayWhatToFix_withoutJavaClassNames(String what, List<String> args) {
        StringWriter err = new StringWriter();
        CommandLine cmd = Main.commandLine(new Env(new HashMap<>(), tmp, 0, tmp), null);
        cmd.setErr(new PrintWriter(err, true));
        cmd.setOut(new PrintWriter(new StringWriter(), true));
        int code = cmd.execute(args.toArray(new String[0]));
        assertThat(code).as(what + ": " + err).isIn(64, 69, 73);
        assertThat(err.toString())
                .as(what)
                .startsWith("interlock: ")
                .doesNotContainPattern("[A-Za-z]+(Exception|Error)\\b")
                .doesNotContain("\tat ")
                .doesNotContain("java.");
    }
}
