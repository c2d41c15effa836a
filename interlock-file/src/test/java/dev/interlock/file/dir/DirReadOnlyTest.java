package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reading changes nothing: opening a lock space, status, list and break never create the
 * directory or its format marker (a mistyped path must not quietly become an empty lock space
 * that reports "free"); the first acquisition does.
 */
class DirReadOnlyTest {
    @TempDir
    Path tmp;

    private static String[] entries(Path d) throws Exception {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toArray(String[]::new);
        }
    }

    @Test
    void statusListBreak_onAMissingPath_sayNoLockSpace_andCreateNothing() {
        Path missing = tmp.resolve("typo-locks");
        try (LockSpace locks = Interlock.open("dir:" + missing)) {
            String expected = "no lock space at " + missing + " (nothing was created)";
            assertThatThrownBy(() -> locks.status("job"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(expected);
            assertThatThrownBy(locks::list)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(expected);
            assertThatThrownBy(() -> locks.breakLock("job", "host:1:1:00"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(expected);
        }
        assertThat(tmp.resolve("typo-locks")).doesNotExist();
    }

    @Test
    void statusListBreak_onAnExistingDirectory_readItAsEmpty_andMakeNoMarker() throws Exception {
        Path root = Files.createDirectory(tmp.resolve("locks"));
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            assertThat(locks.status("job").isFree()).isTrue();
            assertThat(locks.list()).isEmpty();
            assertThat(locks.breakLock("job", "host:1:1:00")).isFalse();
        }
        assertThat(entries(root)).isEmpty();
    }

    @Test
    void firstAcquisition_createsTheRootAndTheMarker_andReadsThenWork() throws Exception {
        Path root = tmp.resolve("new-locks");
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            assertThat(root).doesNotExist();
            locks.tryAcquire("job").orElseThrow().close();
            assertThat(entries(root)).containsExactly(".interlock-dir", "job");
            assertThat(Files.readString(root.resolve(".interlock-dir"))).isEqualTo("interlock-dir 1\n");
            assertThat(locks.status("job").isFree()).isTrue();
        }
    }

    @Test
    void aRootThatCannotBeCreated_saysWhereAndWhy_withoutAJavaClassName() {
        try (LockSpace locks = Interlock.open("dir:/sys/interlock-test")) { // sysfs refuses mkdir, even to root
            assertThatThrownBy(() -> locks.tryAcquire("job"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("cannot be created (/sys/interlock-test: operation not permitted)")
                    .hasMessageNotContaining("Exception");
        }
    }

    @Test
    void aMissingParent_isNotCreated_aSharedMountMayBeMissing() {
        Path root = tmp.resolve("unmounted/locks");
        assertThatThrownBy(() -> Interlock.open("dir:" + root))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("does not exist, nor does its parent " + tmp.resolve("unmounted"))
                .hasMessageContaining("mounted");
        assertThat(tmp.resolve("unmounted")).doesNotExist();
    }

    @Test
    void aPathThroughAFile_isRefusedAtOpen() throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        for (Path p : new Path[] {file, file.resolve("locks")}) {
            assertThatThrownBy(() -> Interlock.open("dir:" + p))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(p + " is not a directory");
        }
    }
}
