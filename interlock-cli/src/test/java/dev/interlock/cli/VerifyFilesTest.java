package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Cleanups in directories others may write never follow a planted link. */
class VerifyFilesTest {
    @TempDir
    Path tmp;

    @Test
    void deleteTree_removesEverything_butOnlyTheLinksOfWhatIsOutside() throws IOException {
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Path precious = Files.writeString(outside.resolve("precious"), "keep me");
        Path run = Files.createDirectories(tmp.resolve("shared/run/hosts/h1"));
        Files.writeString(run.resolve("worker-0.log"), "EX 1 0 c 1 2\n");
        Files.createSymbolicLink(run.resolve("planted"), outside);
        Files.createSymbolicLink(tmp.resolve("shared/run/hosts/linked-host"), outside);
        VerifyFiles.deleteTree(tmp.resolve("shared/run"));
        assertThat(tmp.resolve("shared/run")).doesNotExist();
        assertThat(tmp.resolve("shared")).isDirectory();
        assertThat(precious).hasContent("keep me");
    }

    @Test
    void removeLockFiles_flock_removesTheFileAndItsGate_notWhatALinkPointsTo() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("locks/.gates"));
        Path locks = dir.getParent();
        Files.writeString(locks.resolve("interlock-verify-1"), "");
        Files.writeString(dir.resolve("interlock-verify-1"), "");
        VerifyFiles.removeLockFiles("flock", locks, "interlock-verify-1");
        assertThat(locks.resolve("interlock-verify-1")).doesNotExist();
        assertThat(dir.resolve("interlock-verify-1")).doesNotExist();
        Path target = Files.writeString(tmp.resolve("target"), "x");
        Files.createSymbolicLink(locks.resolve("interlock-verify-2"), target);
        VerifyFiles.removeLockFiles("flock", locks, "interlock-verify-2");
        assertThat(target).hasContent("x");
        assertThat(locks.resolve("interlock-verify-2"))
                .as("not a regular file: left alone")
                .isSymbolicLink();
    }

    @Test
    void removeLockFiles_dir_removesTheLocksDirectory() throws IOException {
        Path lock = Files.createDirectories(tmp.resolve("locks/interlock-verify-1"));
        Files.writeString(lock.resolve("F.00000000000000000007"), "");
        VerifyFiles.removeLockFiles("dir", tmp.resolve("locks"), "interlock-verify-1");
        assertThat(lock).doesNotExist();
        assertThat(tmp.resolve("locks")).isDirectory();
    }

    @Test
    void createLikeParent_takesTheParentsPermissions_neverWritableByOthers_andRefusesALink() throws IOException {
        Path parent = Files.createDirectory(tmp.resolve("p"));
        Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwxrwxrwx"));
        VerifyFiles.createLikeParent(parent.resolve("run"), true);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(parent.resolve("run"))))
                .isEqualTo("rwxrwxr-x");
        assertThatThrownBy(() -> VerifyFiles.createLikeParent(parent.resolve("run"), true))
                .isInstanceOf(FileAlreadyExistsException.class);
        VerifyFiles.createLikeParent(parent.resolve("run"), false);
        Files.createSymbolicLink(parent.resolve("link"), tmp);
        assertThatThrownBy(() -> VerifyFiles.createLikeParent(parent.resolve("link"), false))
                .isInstanceOf(CliException.class)
                .hasMessageContaining("is not a directory (a symbolic link, or a file): remove it");
    }
}
