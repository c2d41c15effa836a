package dev.interlock.file.internal;

import com.sun.jna.Pointer;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Internal API of Interlock (not for applications; may change in any release): the libc calls on
 * files, directories, descriptors and locks, for the {@code flock:} and {@code dir:} backends,
 * {@code interlock update} and the benchmarks; through the FFM API on JDK 22+ and JNA direct
 * mapping (the fastest JNA call path) before, as {@link Libc} chooses ({@link Natives}).
 *
 * <p><b>Conventions.</b> Every call returns what the C function returns: -1 (or a negative count)
 * on failure, with the error number in {@link Errno#last()}. Paths are NUL-terminated bytes in the
 * JVM's file-name encoding ({@link #cstring}), never converted by the native path. Linux only; see
 * {@link Libc} for the architectures.
 *
 * <p><b>Binding.</b> With JNA every function here is registered at once, when this class is first
 * used ({@code interlock run} on {@code flock:} calls a dozen of them anyway); with FFM each is
 * bound at its first call. The process calls ({@link LibcProcesses}) and inotify
 * ({@link LibcEvents}) are bound separately, so that nothing pays at start-up for what it does not
 * call. A function is declared in one of the three only; see {@link Natives} to add one.
 *
 * <p><b>Structures</b> are read only where their layout is the same on x86-64 and aarch64:
 * {@code struct statx} (see {@link Statx}), the first field of {@code struct statfs} (see
 * {@link #fileSystemType}) and {@code struct linux_dirent64} (see {@link #readDirectory}).
 */
public final class LibcFiles {
    private static final Natives.Files N = Libc.NATIVES.files();

    private LibcFiles() {}

    // <fcntl.h>: include/uapi/asm-generic/fcntl.h, which x86 uses; arm, aarch64 (arch/arm64/include/uapi/asm/fcntl.h)
    // and ppc swap O_DIRECTORY and O_NOFOLLOW with O_DIRECT and O_LARGEFILE.
    public static final int O_RDONLY = 0;
    public static final int O_WRONLY = 1;
    public static final int O_RDWR = 2;
    public static final int O_CREAT = 0100;
    public static final int O_EXCL = 0200;
    public static final int O_NOCTTY = 0400;
    public static final int O_NONBLOCK = 04000;
    /** 0200000 on x86-64 (asm-generic); 040000 on arm and aarch64, where 0200000 means O_DIRECT. */
    public static final int O_DIRECTORY = Libc.ARM_LIKE_FCNTL ? 040000 : 0200000;
    /** 0400000 on x86-64 (asm-generic); 0100000 on arm and aarch64, where 0400000 means O_LARGEFILE. */
    public static final int O_NOFOLLOW = Libc.ARM_LIKE_FCNTL ? 0100000 : 0400000;

    public static final int O_CLOEXEC = 02000000;
    /**
     * Opening an existing file only to read it, where another user may have planted something:
     * never through a symbolic link, never blocking on a FIFO, never taking a terminal, never
     * inherited by a child.
     */
    public static final int O_READ_NO_FOLLOW = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    /**
     * Creating a file that must be new (a name only its creator can produce, or a temporary one):
     * never through a symbolic link someone planted, never inherited by a child.
     */
    public static final int O_CREATE_NEW_NO_FOLLOW = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

    // include/uapi/linux/fcntl.h (every architecture)
    public static final int AT_FDCWD = -100;
    public static final int AT_SYMLINK_NOFOLLOW = 0x100;
    public static final int AT_REMOVEDIR = 0x200;
    public static final int AT_EMPTY_PATH = 0x1000;
    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    public static final int F_DUPFD_CLOEXEC = 1030;

    // Open file description locks (Linux 3.15+), include/uapi/asm-generic/fcntl.h: the same numbers
    // on every architecture supported here.
    public static final int F_OFD_GETLK = 36;
    public static final int F_OFD_SETLK = 37;
    public static final short F_RDLCK = 0;
    public static final short F_WRLCK = 1;
    public static final short F_UNLCK = 2;
    /**
     * The size of {@code struct flock} on 64-bit Linux: {@code l_type} and {@code l_whence} (short)
     * at 0 and 2, {@code l_start} and {@code l_len} (off_t) at 8 and 16, {@code l_pid} at 24. 32-bit
     * C libraries lay it out in other ways, so {@link #WHOLE_FILE_LOCKS} is false there.
     */
    public static final int FLOCK_STRUCT_SIZE = 32;
    /** True where {@code struct flock} is laid out as {@link #FLOCK_STRUCT_SIZE} says: 64-bit Linux. */
    public static final boolean WHOLE_FILE_LOCKS = Libc.BITS64;

    // <sys/file.h>
    public static final int LOCK_SH = 1;
    public static final int LOCK_EX = 2;
    public static final int LOCK_NB = 4;
    public static final int LOCK_UN = 8;

    // <unistd.h>
    public static final int X_OK = 1;
    public static final int W_OK = 2;

    // <dirent.h>
    public static final byte DT_UNKNOWN = 0;
    public static final byte DT_DIR = 4;
    public static final byte DT_REG = 8;
    public static final byte DT_LNK = 10;

    // <sys/stat.h>
    public static final int S_IFMT = 0170000;
    public static final int S_IFIFO = 0010000;
    public static final int S_IFCHR = 0020000;
    public static final int S_IFDIR = 0040000;
    public static final int S_IFBLK = 0060000;
    public static final int S_IFREG = 0100000;
    public static final int S_IFLNK = 0120000;
    public static final int S_IFSOCK = 0140000;

    /** statx(2) mask: type, mode, nlink, uid, gid, times, ino, size, blocks. */
    public static final int STATX_BASIC_STATS = 0x7ff;

    public static int openat(int dirfd, byte[] path, int flags, int mode) {
        return N.openat(dirfd, path, flags, mode);
    }

    public static int close(int fd) {
        return N.close(fd);
    }

    public static long read(int fd, byte[] buf, long count) {
        return N.read(fd, buf, count);
    }

    public static long write(int fd, byte[] buf, long count) {
        return N.write(fd, buf, count);
    }

    public static long pread(int fd, byte[] buf, long count, long offset) {
        return N.pread(fd, buf, count, offset);
    }

    public static long pwrite(int fd, byte[] buf, long count, long offset) {
        return N.pwrite(fd, buf, count, offset);
    }

    public static int ftruncate(int fd, long length) {
        return N.ftruncate(fd, length);
    }

    public static int fsync(int fd) {
        return N.fsync(fd);
    }

    /** fcntl(2) with an int argument (F_GETFL, F_SETFL, F_DUPFD_CLOEXEC). */
    public static int fcntl(int fd, int cmd, int arg) {
        return N.fcntl(fd, cmd, arg);
    }

    /** fcntl(2) with a {@code struct flock} of {@link #FLOCK_STRUCT_SIZE} bytes, which F_OFD_GETLK fills in. */
    public static int fcntl(int fd, int cmd, byte[] lock) {
        return N.fcntl(fd, cmd, lock);
    }

    public static int flock(int fd, int operation) {
        return N.flock(fd, operation);
    }

    public static int fchmod(int fd, int mode) {
        return N.fchmod(fd, mode);
    }

    public static int fchmodat(int dirfd, byte[] path, int mode, int flags) {
        return N.fchmodat(dirfd, path, mode, flags);
    }

    public static int fchown(int fd, int uid, int gid) {
        return N.fchown(fd, uid, gid);
    }

    public static int faccessat(int dirfd, byte[] path, int mode, int flags) {
        return N.faccessat(dirfd, path, mode, flags);
    }

    public static int mkdirat(int dirfd, byte[] path, int mode) {
        return N.mkdirat(dirfd, path, mode);
    }

    public static int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) {
        return N.renameat(olddirfd, oldpath, newdirfd, newpath);
    }

    public static int unlinkat(int dirfd, byte[] path, int flags) {
        return N.unlinkat(dirfd, path, flags);
    }

    public static int linkat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags) {
        return N.linkat(olddirfd, oldpath, newdirfd, newpath, flags);
    }

    public static long readlinkat(int dirfd, byte[] path, byte[] buf, long size) {
        return N.readlinkat(dirfd, path, buf, size);
    }

    /** statx(2) into {@code buf} (at least 256 bytes); see {@link Statx}. */
    public static int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) {
        return N.statx(dirfd, path, flags, mask, buf);
    }

    public static int fstatfs(int fd, byte[] buf) {
        return N.fstatfs(fd, buf);
    }

    public static int geteuid() {
        return N.geteuid();
    }

    /**
     * Loads and links this process's native path now (JNA's library and logger, or the FFM
     * bindings) with one harmless call: for a short-lived process that does this on a thread of its
     * own while its main thread parses and plans (the command-line tool). Only where loading
     * leaves no trace: on the FFM path, or where JNA finds its native part in
     * {@code jna.boot.library.path} (as the launcher arranges); elsewhere JNA would unpack it into
     * a cache directory (~/.cache/JNA), which a command that fails before it calls C (a
     * {@code status} of a lock space that does not exist) must not leave behind. Never throws: a
     * native path that cannot load fails again, with its message, where a function is really
     * called.
     */
    public static void prepare() {
        try {
            if (Libc.NATIVES.name().equals("ffm") || jnaBootLibraryPresent()) {
                N.geteuid();
            }
        } catch (RuntimeException | LinkageError e) {
            // reported by the first real call
        }
    }

    private static boolean jnaBootLibraryPresent() {
        String path = System.getProperty("jna.boot.library.path");
        if (path == null || path.isEmpty()) {
            return false;
        }
        String file = System.mapLibraryName("jnidispatch");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && new File(dir, file).isFile()) {
                return true;
            }
        }
        return false;
    }

    // ---- extended attributes, for fenced files (dev.interlock.file.AtomicFile, docs/fencing.md) ----
    // Added with AtomicFile; to be ported with the rest of this class to any other native path.

    /** <sys/xattr.h>: fail if the attribute exists (XATTR_CREATE) / does not exist (XATTR_REPLACE); 0 for either. */
    public static final int XATTR_CREATE = 1;

    /** fsetxattr(2): sets the extended attribute {@code name} (NUL-terminated) of an open file. */
    public static int fsetxattr(int fd, byte[] name, byte[] value, long size, int flags) {
        return N.fsetxattr(fd, name, value, size, flags);
    }

    /** fgetxattr(2): the value of {@code name} into {@code value}; its length, or -1 (ENODATA: not set; ENOTSUP: no user xattrs). */
    public static long fgetxattr(int fd, byte[] name, byte[] value, long size) {
        return N.fgetxattr(fd, name, value, size);
    }

    // ---- end of the extended-attribute block ----

    /**
     * getdents64(2) into native memory: {@code struct linux_dirent64} records; 0 at the end, -1
     * with errno. By syscall(2) ({@link Libc#SYS_GETDENTS64}): glibc wrapped it late (2.30; RHEL 8
     * has 2.28).
     */
    public static long getdents64(int fd, Pointer buf, long count) {
        return N.getdents64(fd, buf, count);
    }

    // ------------------------------------------------------------------------------- helpers

    /** The NUL-terminated bytes of {@code s} in the JVM's file-name encoding. */
    public static byte[] cstring(String s) {
        return cstring(s.getBytes(Libc.PATH_CHARSET));
    }

    /** {@code bytes} with a terminating NUL. */
    public static byte[] cstring(byte[] bytes) {
        return Arrays.copyOf(bytes, bytes.length + 1);
    }

    /** The NUL-terminated bytes of a path. */
    public static byte[] path(Path p) {
        return cstring(p.toString());
    }

    /** The empty path, with {@link #AT_EMPTY_PATH}: the descriptor itself. */
    public static final byte[] EMPTY_PATH = {0};

    /** {@code "."}. */
    public static final byte[] DOT = {'.', 0};

    /**
     * What statx(2) tells of a file (the fields Interlock uses). {@code struct statx} has the same
     * layout on every architecture (include/uapi/linux/stat.h): stx_nlink u32 at 16, stx_uid u32 at
     * 20, stx_gid u32 at 24, stx_mode u16 at 28, stx_ino u64 at 32, stx_size u64 at 40,
     * stx_dev_major u32 at 136, stx_dev_minor u32 at 140; native byte order, little-endian on
     * every Linux platform supported here.
     */
    public record Statx(int mode, int uid, int gid, int nlink, long ino, long size, long devMajor, long devMinor) {
        static Statx parse(byte[] b) {
            return new Statx(
                    getShort(b, 28),
                    getInt(b, 20),
                    getInt(b, 24),
                    getInt(b, 16),
                    getLong(b, 32),
                    getLong(b, 40),
                    getInt(b, 136) & 0xffffffffL,
                    getInt(b, 140) & 0xffffffffL);
        }

        /** True if both are the same file: same device, same inode. */
        public boolean sameFile(Statx o) {
            return o != null && o.ino == ino && o.devMajor == devMajor && o.devMinor == devMinor;
        }

        public int type() {
            return mode & S_IFMT;
        }

        public boolean isRegularFile() {
            return type() == S_IFREG;
        }

        public boolean isDirectory() {
            return type() == S_IFDIR;
        }

        public boolean isSymbolicLink() {
            return type() == S_IFLNK;
        }
    }

    /** statx(2) of {@code path} relative to {@code dirfd} with {@code flags}, or null with errno set. */
    public static Statx statx(int dirfd, byte[] path, int flags) {
        byte[] buf = new byte[256];
        if (statx(dirfd, path, flags, STATX_BASIC_STATS, buf) != 0) {
            return null;
        }
        return Statx.parse(buf);
    }

    /** statx(2) of an open descriptor, or null with errno set. */
    public static Statx fstat(int fd) {
        return statx(fd, EMPTY_PATH, AT_EMPTY_PATH);
    }

    /** statx(2) of {@code name} in the directory {@code dirfd}, not following a final link, or null with errno set. */
    public static Statx lstatAt(int dirfd, byte[] name) {
        return statx(dirfd, name, AT_SYMLINK_NOFOLLOW);
    }

    /**
     * The file-system type (the magic number of linux/magic.h) of an open descriptor, or -1 with
     * errno set. {@code f_type} is the first field of struct statfs, a long on x86-64 and aarch64
     * (an int on 32-bit platforms); every magic fits in 32 bits, so its low 4 bytes are read.
     */
    public static long fileSystemType(int fd) {
        byte[] buf = new byte[256]; // struct statfs is 120 bytes on x86-64 and aarch64
        if (fstatfs(fd, buf) != 0) {
            return -1;
        }
        return getInt(buf, 0) & 0xffffffffL;
    }

    /** One directory entry: its name (raw bytes, no NUL) and {@code d_type} ({@link #DT_UNKNOWN} where the file system does not fill it). */
    public record DirEntry(byte[] name, byte type) {}

    /** The size of the buffer {@link #readDirectory} reads entries into. */
    static final int DENTS_SIZE = 64 * 1024;

    private static final ThreadLocal<byte[]> DENTS = ThreadLocal.withInitial(() -> new byte[DENTS_SIZE]);

    /**
     * Lists the directory {@code dirfd} afresh: opens "." relative to it (on NFS the open
     * revalidates the directory, close-to-open), reads every entry with getdents64, closes. "."
     * and ".." are left out. Null, with errno set, if the directory cannot be opened or read.
     * {@code struct linux_dirent64} is the same everywhere: d_ino u64, d_off s64, d_reclen u16 at
     * 16, d_type u8 at 18, d_name from 19, NUL-terminated.
     */
    public static List<DirEntry> readDirectory(int dirfd) {
        int fd = openat(dirfd, DOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0) {
            return null;
        }
        List<DirEntry> out = new ArrayList<>();
        try {
            byte[] buf = DENTS.get();
            while (true) {
                long n = N.getdents64(fd, buf);
                if (n == 0) {
                    return out;
                }
                if (n < 0) {
                    return null;
                }
                for (int off = 0; off < n; ) {
                    int reclen = getShort(buf, off + 16);
                    byte type = buf[off + 18];
                    int len = 0;
                    while (len < reclen - 19 && buf[off + 19 + len] != 0) {
                        len++;
                    }
                    byte[] name = Arrays.copyOfRange(buf, off + 19, off + 19 + len);
                    if (!(len == 1 && name[0] == '.') && !(len == 2 && name[0] == '.' && name[1] == '.')) {
                        out.add(new DirEntry(name, type));
                    }
                    off += reclen;
                }
            }
        } finally {
            int err = Errno.last();
            close(fd);
            Errno.set(err);
        }
    }

    /** Writes all of {@code data} to {@code fd}; false, with errno set, if a write fails. */
    public static boolean writeFully(int fd, byte[] data) {
        int off = 0;
        while (off < data.length) {
            byte[] chunk = off == 0 ? data : Arrays.copyOfRange(data, off, data.length);
            long n = write(fd, chunk, chunk.length);
            if (n < 0) {
                if (Errno.last() == Errno.EINTR) {
                    continue;
                }
                return false;
            }
            off += (int) n;
        }
        return true;
    }

    static int getInt(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    private static int getShort(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    }

    private static long getLong(byte[] b, int off) {
        return (getInt(b, off) & 0xffffffffL) | ((long) getInt(b, off + 4)) << 32;
    }
}
