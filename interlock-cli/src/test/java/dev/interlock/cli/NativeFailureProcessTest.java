package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where C cannot be called (JNA's native part cannot be found or unpacked: a temporary directory
 * mounted noexec, a stripped install), every command that needs it says so and what to do, exit
 * 69, instead of a stack trace of "Could not initialize class com.sun.jna.NativeLibrary".
 */
class NativeFailureProcessTest {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"run", "status", "list"})
    void noJnaNativePart_isExit69_withWhatToDo(String command) throws Exception {
        List<String> jvm = List.of(
                "-Dinterlock.natives=jna-call",
                "-Djna.boot.library.path=" + tmp.resolve("none"),
                "-Djna.nosys=true",
                "-Djna.noclasspath=true",
                "-Djna.nounpack=true");
        String backend = "flock:" + tmp.resolve("locks");
        String[] args = switch (command) {
            case "run" -> new String[] {"run", "--backend", backend, "x", "--", "true"};
            case "status" -> new String[] {"status", "--backend", backend, "x"};
            default -> new String[] {"list", "--backend", backend};
        };
        try (CliProcess p = CliProcess.start(jvm, Map.of(), args)) {
            assertThat(p.exitCode()).as(p.err()).isEqualTo(69);
            assertThat(p.err())
                    .startsWith("interlock: cannot call the C library through JNA: ")
                    .contains("jna.boot.library.path")
                    .doesNotContain("\tat ")
                    .doesNotContain("Could not initialize class");
        }
    }
}
