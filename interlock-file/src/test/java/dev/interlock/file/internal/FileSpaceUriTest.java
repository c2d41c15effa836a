package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code flock:} and {@code dir:} accept exactly the same URI forms, and refuse the same ones. */
class FileSpaceUriTest {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"flock", "dir"})
    void theSameFormsOpen_onBothFileBackends(String scheme) throws Exception {
        Path d = Files.createDirectory(tmp.resolve("with space"));
        for (String uri : new String[] {
            scheme + ":" + d, scheme + "://" + d, scheme + ":" + d + "/", scheme + ":" + d + "/../" + d.getFileName()
        }) {
            try (LockSpace s = Interlock.open(uri)) {
                assertThat(s.uri()).as(uri).isEqualTo(scheme + ":" + d);
                s.tryAcquire("x").orElseThrow().close();
            }
        }
        Path cwd = Path.of("").toAbsolutePath();
        try (LockSpace s = Interlock.open(scheme + ":relative-not-made")) {
            assertThat(s.uri())
                    .as("a relative path is resolved against the working directory")
                    .isEqualTo(scheme + ":" + cwd.resolve("relative-not-made"));
        }
        assertThat(cwd.resolve("relative-not-made"))
                .as("opening creates nothing")
                .doesNotExist();
    }

    @ParameterizedTest
    @ValueSource(strings = {"flock", "dir"})
    void theSameFormsAreRefused_onBothFileBackends(String scheme) {
        assertThatThrownBy(() -> Interlock.open(scheme + "://otherhost/locks"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names a host ('otherhost')");
        assertThatThrownBy(() -> Interlock.open(scheme + ":"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names no directory");
        assertThatThrownBy(() -> Interlock.open(scheme + ":" + tmp + "#x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'#'");
        assertThatThrownBy(() -> Interlock.open(scheme + ":" + tmp + "?nosuch=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option 'nosuch'");
    }
}
