package dev.interlock.file.flock;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The few libc calls the flock backend needs, through JNA direct mapping (the fastest JNA
 * call path). Linux only. Paths are passed as NUL-terminated bytes in the JVM's file-name
 * encoding, never through JNA's string conversion.
 */
final class LibC {
    static {
        Native.register(NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
    }

    private LibC() {}

    static final int O_RDONLY = 0;
    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    static final int O_NOCTTY = 0400;
    static final int O_NONBLOCK = 04000;
    static final int O_CLOEXEC = 02000000;
    /** Differs between architectures: 0400000 on x86 (asm-generic), 0100000 on arm/aarch64 (asm/fcntl.h). */
    static final int O_NOFOLLOW = Platform.isARM() ? 0100000 : 0400000;
    /** Differs between architectures: 0200000 on x86 (asm-generic), 040000 on arm/aarch64 (asm/fcntl.h). */
    static final int O_DIRECTORY = Platform.isARM() ? 040000 : 0200000;

    static final int LOCK_SH = 1;
    static final int LOCK_EX = 2;
    static final int LOCK_NB = 4;
    static final int LOCK_UN = 8;

    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EINTR = 4;
    static final int EIO = 5;
    static final int EBADF = 9;
    static final int EAGAIN = 11;
    static final int EACCES = 13;
    static final int EEXIST = 17;
    static final int ENOTDIR = 20;
    static final int EISDIR = 21;
    static final int ENOSPC = 28;
    static final int EROFS = 30;
    static final int ENOLCK = 37;
    static final int ELOOP = 40;

    static final int W_OK = 2;
    static final int X_OK = 1;

    static final int AT_FDCWD = -100;
    static final int AT_SYMLINK_NOFOLLOW = 0x100;
    static final int AT_EMPTY_PATH = 0x1000;
    static final int STATX_BASIC_STATS = 0x7ff;

    static final int IN_ATTRIB = 0x4;
    static final int IN_CLOSE_WRITE = 0x8;
    static final int IN_CLOSE_NOWRITE = 0x10;
    static final int IN_DELETE_SELF = 0x400;
    static final int IN_MOVE_SELF = 0x800;
    static final int IN_IGNORED = 0x8000;
    static final int POLLIN = 1;

    static native int open(byte[] path, int flags, int mode);

    static native int openat(int dirfd, byte[] path, int flags, int mode);

    static native int mkdirat(int dirfd, byte[] path, int mode);

    static native int fchmod(int fd, int mode);

    static native int faccessat(int dirfd, byte[] path, int mode, int flags);

    static native int fstatfs(int fd, byte[] buf);

    static native int geteuid();

    static native int close(int fd);

    static native int flock(int fd, int operation);

    static native long pread(int fd, byte[] buf, long count, long offset);

    static native long pwrite(int fd, byte[] buf, long count, long offset);

    static native int ftruncate(int fd, long length);

    static native int statx(int dirfd, byte[] path, int flags, int mask, byte[] statxbuf);

    static native int inotify_init1(int flags);

    static native int inotify_add_watch(int fd, byte[] path, int mask);

    static native int inotify_rm_watch(int fd, int wd);

    static native long read(int fd, byte[] buf, long count);

    static native long write(int fd, byte[] buf, long count);

    static native int poll(byte[] fds, long nfds, int timeout);

    static native int eventfd(int initval, int flags);

    static native String strerror(int errnum);

    static int errno() {
        return Native.getLastError();
    }

    private static final Charset PATH_CHARSET = pathCharset();

    private static Charset pathCharset() {
        String jnu = System.getProperty("sun.jnu.encoding");
        try {
            return jnu != null ? Charset.forName(jnu) : StandardCharsets.UTF_8;
        } catch (RuntimeException e) {
            return StandardCharsets.UTF_8;
        }
    }

    /** The NUL-terminated bytes of a path. */
    static byte[] path(Path p) {
        return cstring(p.toString());
    }

    static byte[] cstring(String s) {
        byte[] b = s.getBytes(PATH_CHARSET);
        byte[] out = new byte[b.length + 1];
        System.arraycopy(b, 0, out, 0, b.length);
        return out;
    }

    static final byte[] EMPTY_PATH = {0};

    /** A description such as {@code EACCES (Permission denied)}. */
    static String describe(int errno) {
        String name;
        switch (errno) {
            case EPERM: name = "EPERM"; break;
            case ENOENT: name = "ENOENT"; break;
            case EIO: name = "EIO"; break;
            case EBADF: name = "EBADF"; break;
            case EAGAIN: name = "EAGAIN"; break;
            case EACCES: name = "EACCES"; break;
            case EEXIST: name = "EEXIST"; break;
            case ENOTDIR: name = "ENOTDIR"; break;
            case EISDIR: name = "EISDIR"; break;
            case ENOSPC: name = "ENOSPC"; break;
            case EROFS: name = "EROFS"; break;
            case ENOLCK: name = "ENOLCK"; break;
            case ELOOP: name = "ELOOP"; break;
            default: name = "errno " + errno;
        }
        String text;
        try {
            text = strerror(errno);
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            text = null;
        }
        return text == null ? name : name + " (" + text + ")";
    }

    /** What statx tells about one file (the fields we use). Layout of struct statx is the same on every architecture. */
    static final class FileId {
        final long dev;
        final int devMajor;
        final int devMinor;
        final long ino;
        final int nlink;
        final int mode;
        final int uid;
        final long size;

        FileId(byte[] b) {
            nlink = getInt(b, 16);
            uid = getInt(b, 20);
            mode = getShort(b, 28);
            ino = getLong(b, 32);
            size = getLong(b, 40);
            devMajor = getInt(b, 136);
            devMinor = getInt(b, 140);
            dev = ((long) devMajor << 32) | (devMinor & 0xffffffffL);
        }

        boolean sameFile(FileId o) {
            return o != null && o.dev == dev && o.ino == ino;
        }

        boolean isRegularFile() {
            return (mode & 0170000) == 0100000;
        }

        boolean isDirectory() {
            return (mode & 0170000) == 0040000;
        }

        boolean isSymbolicLink() {
            return (mode & 0170000) == 0120000;
        }
    }

    /** statx of an open descriptor, or null with errno set. */
    static FileId fstat(int fd) {
        byte[] buf = new byte[256];
        if (statx(fd, EMPTY_PATH, AT_EMPTY_PATH, STATX_BASIC_STATS, buf) != 0) {
            return null;
        }
        return new FileId(buf);
    }

    /** statx of a path, following links (a path the user gave), or null with errno set. */
    static FileId stat(byte[] path) {
        byte[] buf = new byte[256];
        if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, buf) != 0) {
            return null;
        }
        return new FileId(buf);
    }

    /** statx of {@code name} in the directory {@code dirfd}, not following a final symlink, or null with errno set. */
    static FileId statAt(int dirfd, byte[] name) {
        byte[] buf = new byte[256];
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, buf) != 0) {
            return null;
        }
        return new FileId(buf);
    }

    /**
     * The file-system type (the magic number of linux/magic.h) of an open descriptor, or -1 with
     * errno set. {@code f_type} is the first field of struct statfs, a long on x86-64 and aarch64
     * (an int on 32-bit platforms); every magic fits in 32 bits, so its low 4 bytes are read.
     */
    static long fileSystemType(int fd) {
        byte[] buf = new byte[256]; // struct statfs is 120 bytes on x86-64 and aarch64
        if (fstatfs(fd, buf) != 0) {
            return -1;
        }
        return getInt(buf, 0) & 0xffffffffL;
    }

    private static int getInt(byte[] b, int off) {
        // statx fields are in native byte order; every Linux platform JNA supports here is little-endian.
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    private static int getShort(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    }

    private static long getLong(byte[] b, int off) {
        return (getInt(b, off) & 0xffffffffL) | ((long) getInt(b, off + 4)) << 32;
    }
}
