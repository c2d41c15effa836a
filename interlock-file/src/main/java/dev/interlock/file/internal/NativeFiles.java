package dev.interlock.file.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Internal API of Interlock (not for applications; may change in any release): the file
 * operations of the file backends ({@code flock:} and {@code dir:}), on {@link LibcFiles}, with the
 * module's one way of reporting a native error: a failed call throws {@link ErrnoException}, whose
 * {@link ErrnoException#errno()} the caller tests (ENOENT, EEXIST...) and whose message is the
 * errno text. {@link Errno#last()} is read here, right after the call that set it, and nowhere
 * in the backends. Paths are relative to a directory descriptor ({@code *at} calls); a name given
 * as a String is encoded as Java encodes file names, one given as bytes is already NUL-terminated
 * ({@link LibcFiles#cstring}: the hot paths encode their names once).
 *
 * <p>The exceptions to throwing are the calls whose error numbers are normal answers, made in
 * loops on the waiting paths, where an exception per answer would be garbage per wake-up:
 * {@link #tryFlock} (a busy lock), and the blocking waits, which test {@code EINTR}/{@code EAGAIN}
 * on an int return and read {@link Errno#last()} right after the call: {@link KernelWait}'s
 * timed {@code flock}, the {@code poll}/{@code read} loops of {@link InotifyWatcher} and
 * {@link EntryWatcher}, and {@link LibcFiles}'s own read/write loops. Those setting up a waiter
 * (inotify_init1, timer_create) log the error and fall back to polling.
 */
public final class NativeFiles {
    private NativeFiles() {}

    /**
     * Set by tests: every call of this process that names a file fails with EIO, as on an NFS
     * mount whose server stopped answering (soft mount) or was cut off.
     */
    private static volatile boolean cutOff;

    /** Cuts this process off from every file it names ({@code true}), or restores it; for tests. */
    public static void cutOff(boolean cut) {
        cutOff = cut;
    }

    /** Throws if the native calls cannot be bound (not Linux, or JNA missing); {@code backend} is the scheme, e.g. {@code dir:}. */
    public static void requireAvailable(String backend) {
        try {
            LibcFiles.geteuid();
        } catch (LinkageError e) { // UnsatisfiedLinkError, NoClassDefFoundError, ExceptionInInitializerError
            Throwable why = e.getCause() != null ? e.getCause() : e;
            throw new UnsupportedOperationException(
                    "the " + backend + " backend needs Linux and JNA: "
                            + (why.getMessage() != null ? why.getMessage() : "the C library cannot be called"),
                    e);
        }
    }

    private static byte[] c(String name) {
        return named(LibcFiles.cstring(name));
    }

    private static byte[] named(byte[] name) {
        if (cutOff) {
            throw new ErrnoException(Errno.EIO); // a test's file server that stopped answering
        }
        return name;
    }

    private static ErrnoException failed() {
        return new ErrnoException(Errno.last());
    }

    public static int openat(int dirfd, String path, int flags, int mode) {
        return openat(dirfd, c(path), flags, mode);
    }

    public static int openat(int dirfd, byte[] path, int flags, int mode) {
        return Errno.check(LibcFiles.openat(dirfd, named(path), flags, mode));
    }

    public static void close(int fd) {
        Errno.check(LibcFiles.close(fd));
    }

    public static void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) {
        Errno.check(LibcFiles.renameat(olddirfd, c(oldpath), newdirfd, c(newpath)));
    }

    public static void unlinkat(int dirfd, String path, int flags) {
        Errno.check(LibcFiles.unlinkat(dirfd, c(path), flags));
    }

    public static void mkdirat(int dirfd, String path, int mode) {
        mkdirat(dirfd, c(path), mode);
    }

    public static void mkdirat(int dirfd, byte[] path, int mode) {
        Errno.check(LibcFiles.mkdirat(dirfd, named(path), mode));
    }

    public static void linkat(int olddirfd, String oldpath, int newdirfd, String newpath, int flags) {
        Errno.check(LibcFiles.linkat(olddirfd, c(oldpath), newdirfd, c(newpath), flags));
    }

    public static void fchmod(int fd, int mode) {
        Errno.check(LibcFiles.fchmod(fd, mode));
    }

    public static void fchmodat(int dirfd, String path, int mode, int flags) {
        Errno.check(LibcFiles.fchmodat(dirfd, c(path), mode, flags));
    }

    /** {@code kill(target, sig)}. */
    public static void kill(int target, int sig) {
        Errno.check(LibcProcesses.kill(target, sig));
    }

    /**
     * {@code flock(fd, op | LOCK_NB)}, again if a signal interrupts it: true if the lock was
     * taken, false if someone else holds it (EWOULDBLOCK). It returns rather than throws there
     * because a busy lock is the normal answer of a try, and a contended waiter tries at every
     * wake-up: an exception per busy try would be garbage on the hottest path of {@code flock:}.
     * Any other error throws.
     */
    public static boolean tryFlock(int fd, int op) {
        while (true) {
            if (LibcFiles.flock(fd, op | LibcFiles.LOCK_NB) == 0) {
                return true;
            }
            int err = Errno.last();
            if (err == Errno.EAGAIN) {
                return false;
            }
            if (err != Errno.EINTR) {
                throw new ErrnoException(err);
            }
        }
    }

    /**
     * An open file description lock ({@code fcntl(fd, F_OFD_SETLK)}) of {@code type}
     * ({@link LibcFiles#F_RDLCK}, {@code F_WRLCK}, {@code F_UNLCK}) on the whole of {@code fd}'s
     * file, without waiting: true if it is set, false if another open file description holds a
     * lock that conflicts. The lock belongs to the open file description, not to the process or the
     * thread: close(2) of its last descriptor releases it, and so does the death of the process. On
     * a local file system it is independent of flock(2) locks on the same file; on NFS and SMB,
     * which emulate flock(2) with byte-range locks, it is not. Any other error throws (EINVAL: a
     * kernel before 3.15, without these locks). Only where {@link LibcFiles#WHOLE_FILE_LOCKS}.
     */
    public static boolean tryLockWholeFile(int fd, short type) {
        byte[] lock = wholeFile(type);
        while (true) {
            if (LibcFiles.fcntl(fd, LibcFiles.F_OFD_SETLK, lock) == 0) {
                return true;
            }
            int err = Errno.last();
            if (err == Errno.EAGAIN || err == Errno.EACCES) {
                return false;
            }
            if (err != Errno.EINTR) {
                throw new ErrnoException(err);
            }
        }
    }

    /**
     * {@code fcntl(fd, F_OFD_GETLK)}: true if another open file description holds a lock on part of
     * {@code fd}'s file that a lock of {@code type} on the whole of it would conflict with. Locks of
     * {@code fd}'s own open file description never conflict with it. One system call; errors as
     * {@link #tryLockWholeFile}.
     */
    public static boolean wholeFileLockConflicts(int fd, short type) {
        byte[] lock = wholeFile(type);
        while (LibcFiles.fcntl(fd, LibcFiles.F_OFD_GETLK, lock) != 0) {
            int err = Errno.last();
            if (err != Errno.EINTR) {
                throw new ErrnoException(err);
            }
        }
        return ByteBuffer.wrap(lock).order(ByteOrder.nativeOrder()).getShort(0) != LibcFiles.F_UNLCK;
    }

    /** A {@code struct flock} of {@code type} from offset 0 (SEEK_SET) to the end of the file, whatever its size (l_len 0). */
    private static byte[] wholeFile(short type) {
        byte[] lock = new byte[LibcFiles.FLOCK_STRUCT_SIZE];
        ByteBuffer.wrap(lock).order(ByteOrder.nativeOrder()).putShort(0, type);
        return lock;
    }

    /** pread(2) of up to {@code count} bytes at {@code offset}: the number of bytes read. */
    public static long pread(int fd, byte[] buf, long count, long offset) {
        return Errno.check(LibcFiles.pread(fd, buf, count, offset));
    }

    /** pwrite(2) of {@code count} bytes at {@code offset}: the number of bytes written, which may be fewer. */
    public static long pwrite(int fd, byte[] buf, long count, long offset) {
        return Errno.check(LibcFiles.pwrite(fd, buf, count, offset));
    }

    public static void ftruncate(int fd, long length) {
        Errno.check(LibcFiles.ftruncate(fd, length));
    }

    /** readlinkat(2) into {@code buf}: the number of bytes of the link's text (not NUL-terminated). */
    public static long readlinkat(int dirfd, byte[] path, byte[] buf) {
        return Errno.check(LibcFiles.readlinkat(dirfd, named(path), buf, buf.length));
    }

    /** {@code fcntl(fd, F_DUPFD_CLOEXEC, lowest)}: a new descriptor for {@code fd}'s file, numbered {@code lowest} or above. */
    public static int duplicateAtLeast(int fd, int lowest) {
        return Errno.check(LibcFiles.fcntl(fd, LibcFiles.F_DUPFD_CLOEXEC, lowest));
    }

    /** renameat(2) of NUL-terminated names. */
    public static void renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) {
        Errno.check(LibcFiles.renameat(olddirfd, named(oldpath), newdirfd, named(newpath)));
    }

    /** unlinkat(2) of a NUL-terminated name. */
    public static void unlinkat(int dirfd, byte[] path, int flags) {
        Errno.check(LibcFiles.unlinkat(dirfd, named(path), flags));
    }

    public static void fchown(int fd, int uid, int gid) {
        Errno.check(LibcFiles.fchown(fd, uid, gid));
    }

    public static void fsync(int fd) {
        Errno.check(LibcFiles.fsync(fd));
    }

    /** fsetxattr(2) of all of {@code value}. */
    public static void fsetxattr(int fd, byte[] name, byte[] value) {
        Errno.check(LibcFiles.fsetxattr(fd, name, value, value.length, 0));
    }

    /** fgetxattr(2) into {@code buf}: the length of the value. */
    public static long fgetxattr(int fd, byte[] name, byte[] buf) {
        return Errno.check(LibcFiles.fgetxattr(fd, name, buf, buf.length));
    }

    /** {@link LibcFiles#readDirectory} of {@code dirfd} afresh, names as the kernel gave them ("." and ".." left out). */
    public static List<LibcFiles.DirEntry> readDirectory(int dirfd) {
        List<LibcFiles.DirEntry> raw = LibcFiles.readDirectory(dirfd);
        if (raw == null) {
            throw failed();
        }
        return raw;
    }

    /** One directory entry: its name and d_type (DT_UNKNOWN on file systems that do not fill it). */
    public record Entry(String name, byte type) {}

    /** Lists {@code dirfd}'s directory afresh (see {@link LibcFiles#readDirectory}); "." and ".." are left out. */
    public static List<Entry> list(int dirfd) {
        List<LibcFiles.DirEntry> raw = readDirectory(dirfd);
        List<Entry> out = new ArrayList<>(raw.size());
        for (LibcFiles.DirEntry e : raw) {
            out.add(new Entry(new String(e.name(), StandardCharsets.UTF_8), e.type()));
        }
        return out;
    }

    /** Writes all of {@code data} to {@code fd}. */
    public static void writeFully(int fd, byte[] data) {
        if (!LibcFiles.writeFully(fd, data)) {
            throw failed();
        }
    }

    /** Reads at most {@code max} bytes of a regular file relative to {@code dirfd}, never following a symlink. */
    public static byte[] readFile(int dirfd, String name, int max) {
        int fd = openat(
                dirfd, name, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC | LibcFiles.O_NONBLOCK, 0);
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
                    throw failed();
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
    public static LibcFiles.Statx statx(int dirfd, String path, int flags) {
        return statx(dirfd, c(path), flags);
    }

    /** statx(2) as {@link #statx(int, String, int)}, of a NUL-terminated path. */
    public static LibcFiles.Statx statx(int dirfd, byte[] path, int flags) {
        LibcFiles.Statx st = LibcFiles.statx(dirfd, named(path), flags);
        if (st == null) {
            throw failed();
        }
        return st;
    }

    /** The identity of an open descriptor. */
    public static LibcFiles.Statx fstat(int fd) {
        return statx(fd, "", LibcFiles.AT_EMPTY_PATH);
    }

    /** st_mode of {@code name} relative to {@code dirfd} without following a symlink, or -1 if absent. */
    public static int lstatMode(int dirfd, String name) {
        LibcFiles.Statx st = LibcFiles.statx(dirfd, c(name), LibcFiles.AT_SYMLINK_NOFOLLOW);
        if (st == null) {
            if (Errno.last() == Errno.ENOENT) {
                return -1;
            }
            throw failed();
        }
        return st.mode();
    }
}
