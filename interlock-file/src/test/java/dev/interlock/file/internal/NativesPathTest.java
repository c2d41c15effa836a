package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The path each JDK uses: JNA before JDK 22; FFM where the build asks for it
 * ({@code interlock.test.natives}, set by the run of these tests on the JDK 22+ of the build, on
 * the multi-release jar), so that a silent fall back to JNA there fails the build.
 */
class NativesPathTest {
    @Test
    void theExpectedPath_isTheOneInUse() {
        String expected = System.getProperty("interlock.test.natives");
        if (expected == null || expected.isEmpty()) {
            assumeTrue(Runtime.version().feature() < 22, "on JDK 22+ the path depends on how the classes are packaged");
            expected = "jna";
        }
        assertThat(Libc.NATIVES.name())
                .as("native path on JDK " + Runtime.version())
                .isEqualTo(expected);
    }

    /** Whichever class is initialised first, the FFM class or Libc, Libc must see the FFM instance. */
    @Test
    void ffm_isChosen_evenWhenItsClassIsInitialisedBeforeLibc() throws Exception {
        assumeTrue("ffm".equals(System.getProperty("interlock.test.natives")), "only where FFM is the expected path");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(
                        java.toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        FfmFirstMain.class.getName())
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(out)
                .as("class path " + System.getProperty("java.class.path").replace(File.pathSeparator, "\n"))
                .isEqualTo("ffm");
    }

    @Test
    void jna_canBeForcedOnEveryJdk() {
        assertThat(Libc.select("jna").name()).isEqualTo("jna");
    }

    @Test
    void jnaWithoutRegistration_canBeChosenOnEveryJdk() {
        assertThat(Libc.select("jna-call").name()).isEqualTo("jna-call");
    }

    @Test
    void beforeJdk22_jnaIsTheOnlyPath() {
        assumeTrue(Runtime.version().feature() < 22);
        assertThat(Libc.select("").name()).isEqualTo("jna");
    }
}
