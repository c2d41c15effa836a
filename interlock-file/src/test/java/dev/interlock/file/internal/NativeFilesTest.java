package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The module's one facade over the natives: a failed call throws its errno with the errno's text,
 * except a busy {@code flock(LOCK_NB)}, which answers false (the normal answer of a try on a
 * contended lock, which must not cost an exception); the tests' cut-off fails every call that
 * names a file, bytes or String, and none that only takes a descriptor.
 */
class NativeFilesTest {
    @TempDir
    Path tmp;

    private static final int RW = LibcFiles.O_RDWR | LibcFiles.O_CLOEXEC;

    @Test
    void tryFlock_onABusyLock_answersFalse_andTakesItOnceFree() throws Exception {
        byte[] file = LibcFiles.path(Files.writeString(tmp.resolve("lock"), ""));
        int holder = NativeFiles.openat(LibcFiles.AT_FDCWD, file, RW, 0);
        int other = NativeFiles.openat(LibcFiles.AT_FDCWD, file, RW, 0); // its own open file description
        try {
            assertThat(NativeFiles.tryFlock(holder, LibcFiles.LOCK_EX)).isTrue();
            assertThat(NativeFiles.tryFlock(other, LibcFiles.LOCK_EX)).isFalse();
            assertThat(NativeFiles.tryFlock(other, LibcFiles.LOCK_SH)).isFalse();
            NativeFiles.close(holder);
            holder = -1;
            assertThat(NativeFiles.tryFlock(other, LibcFiles.LOCK_EX)).isTrue();
        } finally {
            if (holder >= 0) {
                NativeFiles.close(holder);
            }
            NativeFiles.close(other);
        }
    }

    /**
     * Open file description locks, as {@code flock:} marks its waiting permit askers: held by one
     * open file description until its close, seen by another's F_OFD_GETLK but not by its own, and
     * independent of flock(2) on the same file.
     */
    @Test
    void wholeFileLocks_belongToTheOpenFileDescription_andLeaveFlockAlone() throws Exception {
        byte[] file = LibcFiles.path(Files.writeString(tmp.resolve("gate"), ""));
        int marker = NativeFiles.openat(LibcFiles.AT_FDCWD, file, RW, 0);
        int other = NativeFiles.openat(LibcFiles.AT_FDCWD, file, RW, 0);
        try {
            assertThat(NativeFiles.wholeFileLockConflicts(other, LibcFiles.F_WRLCK))
                    .isFalse();
            assertThat(NativeFiles.tryLockWholeFile(marker, LibcFiles.F_RDLCK)).isTrue();
            assertThat(NativeFiles.wholeFileLockConflicts(other, LibcFiles.F_WRLCK))
                    .isTrue();
            assertThat(NativeFiles.wholeFileLockConflicts(other, LibcFiles.F_RDLCK))
                    .as("read locks share")
                    .isFalse();
            assertThat(NativeFiles.wholeFileLockConflicts(marker, LibcFiles.F_WRLCK))
                    .as("its own lock never conflicts")
                    .isFalse();
            assertThat(NativeFiles.tryLockWholeFile(other, LibcFiles.F_WRLCK)).isFalse();
            assertThat(NativeFiles.tryFlock(other, LibcFiles.LOCK_EX))
                    .as("flock(2) does not see it")
                    .isTrue();
            assertThat(NativeFiles.tryFlock(marker, LibcFiles.LOCK_EX)).isFalse();
            NativeFiles.close(marker);
            marker = -1;
            assertThat(NativeFiles.wholeFileLockConflicts(other, LibcFiles.F_WRLCK))
                    .as("gone with the close")
                    .isFalse();
        } finally {
            if (marker >= 0) {
                NativeFiles.close(marker);
            }
            NativeFiles.close(other);
        }
    }

    @Test
    void tryFlock_onAnythingButBusy_throwsTheErrno() {
        ErrnoException e =
                catchThrowableOfType(() -> NativeFiles.tryFlock(-1, LibcFiles.LOCK_EX), ErrnoException.class);
        assertThat(e.errno()).isEqualTo(Errno.EBADF);
        assertThat(e).hasMessage("bad file descriptor (EBADF)");
    }

    @Test
    void aFailedCall_throwsItsErrno_withTheErrnoText() {
        byte[] missing = LibcFiles.path(tmp.resolve("missing"));
        ErrnoException open = catchThrowableOfType(
                () -> NativeFiles.openat(LibcFiles.AT_FDCWD, missing, RW, 0), ErrnoException.class);
        assertThat(open.errno()).isEqualTo(Errno.ENOENT);
        assertThat(open).hasMessage("no such file or directory (ENOENT)");
        ErrnoException stat =
                catchThrowableOfType(() -> NativeFiles.statx(LibcFiles.AT_FDCWD, missing, 0), ErrnoException.class);
        assertThat(stat.errno()).isEqualTo(Errno.ENOENT);
        assertThat(NativeFiles.lstatMode(
                        LibcFiles.AT_FDCWD, tmp.resolve("missing").toString()))
                .isEqualTo(-1);
    }

    @Test
    void cutOff_failsEveryCallThatNamesAFile_withEio() throws Exception {
        byte[] file = LibcFiles.path(Files.writeString(tmp.resolve("lock"), ""));
        int fd = NativeFiles.openat(LibcFiles.AT_FDCWD, file, RW, 0);
        NativeFiles.cutOff(true);
        try {
            assertThat(catchThrowableOfType(
                                    () -> NativeFiles.openat(LibcFiles.AT_FDCWD, file, RW, 0), ErrnoException.class)
                            .errno())
                    .isEqualTo(Errno.EIO);
            assertThat(catchThrowableOfType(() -> NativeFiles.statx(LibcFiles.AT_FDCWD, file, 0), ErrnoException.class)
                            .errno())
                    .isEqualTo(Errno.EIO);
            assertThat(catchThrowableOfType(
                                    () -> NativeFiles.mkdirat(
                                            LibcFiles.AT_FDCWD, tmp.resolve("d").toString(), 0700),
                                    ErrnoException.class)
                            .errno())
                    .isEqualTo(Errno.EIO);
            assertThat(NativeFiles.tryFlock(fd, LibcFiles.LOCK_EX))
                    .isTrue(); // a descriptor is no name: the kernel lock still works
        } finally {
            NativeFiles.cutOff(false);
            NativeFiles.close(fd);
        }
        assertThat(NativeFiles.statx(LibcFiles.AT_FDCWD, file, 0).isRegularFile())
                .isTrue();
    }
}
