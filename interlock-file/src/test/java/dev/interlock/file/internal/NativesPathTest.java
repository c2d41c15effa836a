package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
        assertThat(Libc.NATIVES.name()).as("native path on JDK " + Runtime.version()).isEqualTo(expected);
    }

    @Test
    void jna_canBeForcedOnEveryJdk() {
        assertThat(Libc.select("jna").name()).isEqualTo("jna");
    }

    @Test
    void beforeJdk22_jnaIsTheOnlyPath() {
        assumeTrue(Runtime.version().feature() < 22);
        assertThat(Libc.select("").name()).isEqualTo("jna");
    }
}
