package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirBackendProviderTest {
    @TempDir
    Path tmp;

    @Test
    void open_validUris_work() {
        assertThat(Interlock.availableSchemes()).containsKey("dir");
        try (LockSpace s = Interlock.open("dir:" + tmp + "?poll=20ms")) {
            assertThat(s.uri()).isEqualTo("dir:" + tmp);
            s.tryAcquire("x").orElseThrow().close();
        }
        try (LockSpace s = Interlock.open("dir://" + tmp.resolve("created-on-demand"))) {
            s.tryAcquire("x").orElseThrow().close();
        }
        assertThat(Files.isDirectory(tmp.resolve("created-on-demand"))).isTrue();
        assertThat(Files.exists(tmp.resolve(".interlock-dir"))).isTrue();
    }

    @Test
    void open_badUris_sayWhatToFix() {
        assertThatThrownBy(() -> Interlock.open("dir://fileserver/locks"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names a host ('fileserver')")
                .hasMessageContaining("mounted on this host");
        assertThatThrownBy(() -> Interlock.open("dir:" + tmp + "?lease=5s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option 'lease'")
                .hasMessageContaining("poll=...");
        assertThatThrownBy(() -> Interlock.open("dir:" + tmp + "?poll=soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("poll must be a duration (use e.g. 500ms, 30s, 5m, 1h");
        assertThatThrownBy(() -> Interlock.open("dir:" + tmp + "?poll=0ms"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("poll must be between 1ms and 1d");
    }

    /** Issue 28: one duration grammar for every scheme; dir: refused 1h, which jdbc: and redis: read. */
    @Test
    void poll_takesTheDurationsOfEveryScheme() {
        for (String poll : new String[] {"1h", "1m30s", "2.5", "250ms"}) {
            try (LockSpace s = Interlock.open("dir:" + tmp + "?poll=" + poll)) {
                s.tryAcquire("x").orElseThrow().close();
            }
        }
    }

    @Test
    void lockDirectories_takeTheRootsPermissions_notTheUmask() throws Exception {
        Path root = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwx---"));
        try (LockSpace s = Interlock.open("dir:" + root)) {
            s.tryAcquire("job").orElseThrow().close();
        }
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(root.resolve("job"))))
                .isEqualTo("rwxrwx---");
    }
}
