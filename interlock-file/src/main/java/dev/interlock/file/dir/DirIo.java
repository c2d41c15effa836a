package dev.interlock.file.dir;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.LibcProcesses;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The file operations of the {@code dir:} protocol, on {@link LibcFiles}: every path is relative
 * to a directory descriptor ({@code *at} calls) and the callers never follow a symbolic link in the
 * lock directory, so nothing planted there can lead an operation out of it. Names are the
 * protocol's own (ASCII); the root's path is encoded as Java encodes file names.
 *
 * <p>A failed call throws {@link ErrnoException}, whose {@link ErrnoException#errno()} the protocol
 * code tests (ENOENT, EEXIST...) and whose message is the errno text.
 */
final class DirIo {
    private DirIo() {}

    /** Throws if the native calls cannot be bound (not Linux, or JNA missing). */
    static void requireAvailable() {
        try {
            LibcFiles.geteuid();
        } catch (LinkageError e) { // UnsatisfiedLinkError, NoClassDefFoundError, ExceptionInInitializerError
            Throwable why = e.getCause() != null ? e.getCause() : e;
            throw new UnsupportedOperationException("the dir: backend needs Linux and JNA: "
                    + (why.getMessage() != null ? why.getMessage() : "the C library cannot be called"), e);
        }
    }

    private static byte[] c(String name) {
        if (DirFaults.cutOff) {
            throw new ErrnoException(Errno.EIO); // a test's file server that stopped answering
        }
        return LibcFiles.cstring(name);
    }

    static int openat(int dirfd, String path, int flags, int mode) {
        return Errno.check(LibcFiles.openat(dirfd, c(path), flags, mode));
    }

    static void close(int fd) {
        Errno.check(LibcFiles.close(fd));
    }

    static void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) {
        Errno.check(LibcFiles.renameat(olddirfd, c(oldpath), newdirfd, c(newpath)));
    }

    static void unlinkat(int dirfd, String path, int flags) {
        Errno.check(LibcFiles.unlinkat(dirfd, c(path), flags));
    }

    static void mkdirat(int dirfd, String path, int mode) {
        Errno.check(LibcFiles.mkdirat(dirfd, c(path), mode));
    }

    static void linkat(int olddirfd, String oldpath, int newdirfd, String newpath, int flags) {
        Errno.check(LibcFiles.linkat(olddirfd, c(oldpath), newdirfd, c(newpath), flags));
    }

    static void fchmod(int fd, int mode) {
        Errno.check(LibcFiles.fchmod(fd, mode));
    }

    static void fchmodat(int dirfd, String path, int mode, int flags) {
        Errno.check(LibcFiles.fchmodat(dirfd, c(path), mode, flags));
    }

    /** {@code kill(target, sig)}. */
    static void kill(int target, int sig) {
        Errno.check(LibcProcesses.kill(target, sig));
    }

    /** One directory entry: its name and d_type (DT_UNKNOWN on file systems that do not fill it). */
    record Entry(String name, byte type) {}

    /** Lists {@code dirfd}'s directory afresh (see {@link LibcFiles#readDirectory}); "." and ".." are left out. */
    static List<Entry> list(int dirfd) {
        List<LibcFiles.DirEntry> raw = LibcFiles.readDirectory(dirfd);
        if (raw == null) {
            throw new ErrnoException(Errno.last());
        }
        List<Entry> out = new ArrayList<>(raw.size());
        for (LibcFiles.DirEntry e : raw) {
            out.add(new Entry(new String(e.name(), StandardCharsets.UTF_8), e.type()));
        }
        return out;
    }

    /** Writes all of {@code data} to {@code fd}. */
    static void writeFully(int fd, byte[] data) {
        if (!LibcFiles.writeFully(fd, data)) {
            throw new ErrnoException(Errno.last());
        }
    }

    /** Reads at most {@code max} bytes of a regular file relative to {@code dirfd}, never following a symlink. */
    static byte[] readFile(int dirfd, String name, int max) {
        int fd = openat(dirfd, name, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC | LibcFiles.O_NONBLOCK, 0);
        try {
            byte[] buf = new byte[max];
            int off = 0;
            while (off < max) {
                byte[] chunk = new byte[max - off];
                long n = LibcFiles.read(fd, chunk, chunk.length);
                if (n < 0 && Errno.last() == Errno.EINTR) {
                    continue;
                }
                if (n < 0) {
                    throw new ErrnoException(Errno.last());
                }
                if (n == 0) {
                    break;
                }
                System.arraycopy(chunk, 0, buf, off, (int) n);
                off += (int) n;
            }
            return Arrays.copyOf(buf, off);
        } finally {
            close(fd);
        }
    }

    /**
     * statx(2) of {@code path} relative to {@code dirfd} with {@code flags}
     * ({@link LibcFiles#AT_SYMLINK_NOFOLLOW}, {@link LibcFiles#AT_EMPTY_PATH} with an empty path for the descriptor itself).
     */
    static LibcFiles.Statx statx(int dirfd, String path, int flags) {
        LibcFiles.Statx st = LibcFiles.statx(dirfd, c(path), flags);
        if (st == null) {
            throw new ErrnoException(Errno.last());
        }
        return st;
    }

    /** The identity of an open descriptor. */
    static LibcFiles.Statx fstat(int fd) {
        return statx(fd, "", LibcFiles.AT_EMPTY_PATH);
    }

    /** st_mode of {@code name} relative to {@code dirfd} without following a symlink, or -1 if absent. */
    static int lstatMode(int dirfd, String name) {
        LibcFiles.Statx st = LibcFiles.statx(dirfd, c(name), LibcFiles.AT_SYMLINK_NOFOLLOW);
        if (st == null) {
            if (Errno.last() == Errno.ENOENT) {
                return -1;
            }
            throw new ErrnoException(Errno.last());
        }
        return st.mode();
    }
}
