package dev.interlock.file.dir;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.util.ArrayList;
import java.util.List;

/**
 * The Linux system calls the {@code dir:} backend needs, by JNA direct mapping. Every path is
 * relative to a directory descriptor ({@code *at} calls) and never follows a symbolic link in
 * the lock directory, so nothing planted there can lead an operation out of it.
 *
 * <p>Failures throw {@link LastErrorException}; {@link LastErrorException#getErrorCode()} is the errno.
 */
final class Posix {
    static final int O_RDONLY = 0;
    static final int O_WRONLY = 1;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_NONBLOCK = 04000;
    static final int O_DIRECTORY = 0200000;
    static final int O_NOFOLLOW = 0400000;
    static final int O_CLOEXEC = 02000000;
    static final int AT_FDCWD = -100;
    static final int AT_REMOVEDIR = 0x200;
    static final int AT_SYMLINK_NOFOLLOW = 0x100;
    static final int AT_EMPTY_PATH = 0x1000;
    static final int STATX_TYPE = 0x1;
    static final int STATX_MODE = 0x2;
    static final int STATX_INO = 0x100;

    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EACCES = 13;
    static final int EEXIST = 17;
    static final int ENOTDIR = 20;
    static final int ENOSPC = 28;
    static final int EROFS = 30;
    static final int ENOTEMPTY = 39;
    static final int ELOOP = 40;
    static final int ESTALE = 116;
    static final int ESRCH = 3;
    static final int EPERM = 1;

    static final byte DT_UNKNOWN = 0;
    static final byte DT_REG = 8;

    static final int IN_NONBLOCK = 04000;
    static final int IN_CLOEXEC = 02000000;
    static final int IN_CREATE = 0x100;
    static final int IN_DELETE = 0x200;
    static final int IN_MOVED_FROM = 0x40;
    static final int IN_MOVED_TO = 0x80;
    static final int IN_DELETE_SELF = 0x400;
    static final int IN_MOVE_SELF = 0x800;
    static final int IN_ONLYDIR = 0x01000000;
    static final int IN_DONT_FOLLOW = 0x02000000;
    static final short POLLIN = 1;

    private static final boolean AVAILABLE;
    private static final Throwable UNAVAILABLE_CAUSE;

    static {
        boolean ok;
        Throwable cause = null;
        try {
            Native.register(Posix.class, NativeLibrary.getInstance("c"));
            ok = true;
        } catch (Throwable t) { // UnsatisfiedLinkError, NoClassDefFoundError: not Linux/glibc
            ok = false;
            cause = t;
        }
        AVAILABLE = ok;
        UNAVAILABLE_CAUSE = cause;
    }

    private Posix() {}

    /** Throws if the native calls could not be bound (not Linux, or JNA missing). */
    static void requireAvailable() {
        if (!AVAILABLE) {
            throw new UnsupportedOperationException("the dir: backend needs Linux and JNA: " + UNAVAILABLE_CAUSE, UNAVAILABLE_CAUSE);
        }
    }

    static native int openat(int dirfd, String path, int flags, int mode) throws LastErrorException;

    static native int close(int fd) throws LastErrorException;

    static native int renameat(int olddirfd, String oldpath, int newdirfd, String newpath) throws LastErrorException;

    static native int unlinkat(int dirfd, String path, int flags) throws LastErrorException;

    static native int mkdirat(int dirfd, String path, int mode) throws LastErrorException;

    static native int linkat(int olddirfd, String oldpath, int newdirfd, String newpath, int flags) throws LastErrorException;

    static native int fchmodat(int dirfd, String path, int mode, int flags) throws LastErrorException;

    static native long write(int fd, byte[] buf, long count) throws LastErrorException;

    static native long read(int fd, byte[] buf, long count) throws LastErrorException;

    static native long getdents64(int fd, Pointer buf, long count) throws LastErrorException;

    static native int inotify_init1(int flags) throws LastErrorException;

    static native int inotify_add_watch(int fd, String path, int mask) throws LastErrorException;

    static native int eventfd(int initval, int flags) throws LastErrorException;

    static native int inotify_rm_watch(int fd, int wd) throws LastErrorException;

    static native int poll(Pointer fds, long nfds, int timeout) throws LastErrorException;

    static native int kill(int pid, int sig) throws LastErrorException;

    static native int statx(int dirfd, String path, int flags, int mask, Pointer statxbuf) throws LastErrorException;

    /** One directory entry: its name and d_type (DT_UNKNOWN on file systems that do not fill it). */
    record DirEntry(String name, byte type) {}

    private static final ThreadLocal<Memory> DENTS = ThreadLocal.withInitial(() -> new Memory(64 * 1024));

    /**
     * Lists {@code dirfd}'s directory afresh: opens "." relative to it (on NFS the open
     * revalidates the directory, close-to-open), reads every entry with getdents64, closes.
     * "." and ".." are skipped.
     */
    static List<DirEntry> list(int dirfd) {
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        List<DirEntry> out = new ArrayList<>();
        try {
            Memory buf = DENTS.get();
            while (true) {
                long n = getdents64(fd, buf, buf.size());
                if (n <= 0) {
                    break;
                }
                int off = 0;
                while (off < n) {
                    // struct linux_dirent64: d_ino(8) d_off(8) d_reclen(2) d_type(1) d_name[]
                    int reclen = buf.getShort(off + 16) & 0xffff;
                    byte type = buf.getByte(off + 18);
                    String name = buf.getString(off + 19, "UTF-8");
                    if (!name.equals(".") && !name.equals("..")) {
                        out.add(new DirEntry(name, type));
                    }
                    off += reclen;
                }
            }
        } finally {
            close(fd);
        }
        return out;
    }

    /** Writes all of {@code data} to {@code fd}. */
    static void writeFully(int fd, byte[] data) {
        int off = 0;
        while (off < data.length) {
            byte[] chunk = off == 0 ? data : java.util.Arrays.copyOfRange(data, off, data.length);
            long n = write(fd, chunk, chunk.length);
            off += (int) n;
        }
    }

    /** Reads at most {@code max} bytes of a regular file relative to {@code dirfd}, never following a symlink. */
    static byte[] readFile(int dirfd, String name, int max) {
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0);
        try {
            byte[] buf = new byte[max];
            int off = 0;
            while (off < max) {
                byte[] chunk = new byte[max - off];
                long n = read(fd, chunk, chunk.length);
                if (n <= 0) {
                    break;
                }
                System.arraycopy(chunk, 0, buf, off, (int) n);
                off += (int) n;
            }
            return java.util.Arrays.copyOf(buf, off);
        } finally {
            close(fd);
        }
    }

    /**
     * What identifies a file (its device and inode number) and its type, from statx(2), whose
     * struct has the same layout on every architecture (unlike struct stat).
     */
    record FileId(long devMajor, long devMinor, long ino, int mode) {
        /** True if both name the same file: same device, same inode. */
        boolean sameFile(FileId o) {
            return devMajor == o.devMajor && devMinor == o.devMinor && ino == o.ino;
        }
    }

    /**
     * statx(2) of {@code path} relative to {@code dirfd} with {@code flags} ({@link #AT_SYMLINK_NOFOLLOW},
     * {@link #AT_EMPTY_PATH} with an empty path for the descriptor itself).
     */
    static FileId statx(int dirfd, String path, int flags) {
        try (Memory m = new Memory(256)) {
            statx(dirfd, path, flags, STATX_TYPE | STATX_MODE | STATX_INO, m);
            // struct statx: stx_mode u16 at 0x1c, stx_ino u64 at 0x20, stx_dev_major u32 at 0x88, stx_dev_minor u32 at 0x8c
            return new FileId(m.getInt(0x88) & 0xffffffffL, m.getInt(0x8c) & 0xffffffffL, m.getLong(0x20), m.getShort(0x1c) & 0xffff);
        }
    }

    /** The identity of an open descriptor. */
    static FileId fstat(int fd) {
        return statx(fd, "", AT_EMPTY_PATH);
    }

    /** st_mode of {@code name} relative to {@code dirfd} without following a symlink, or -1 if absent. */
    static int lstatMode(int dirfd, String name) {
        try {
            return statx(dirfd, name, AT_SYMLINK_NOFOLLOW).mode();
        } catch (LastErrorException e) {
            if (e.getErrorCode() == ENOENT) {
                return -1;
            }
            throw e;
        }
    }

    /** Message text for an errno. */
    static String describe(LastErrorException e) {
        String msg = e.getMessage();
        return msg == null ? "errno " + e.getErrorCode() : msg;
    }
}
