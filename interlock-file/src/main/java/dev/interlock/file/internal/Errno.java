package dev.interlock.file.internal;

import java.util.Locale;

/**
 * Internal API of Interlock (not for applications; may change in any release): the one error
 * convention of the native calls in this package. A call that fails returns -1 (or a negative
 * count) and leaves its error number in {@link #last()}; {@link #describe(int)} turns it into the
 * text every message shows, such as {@code permission denied (EACCES)}.
 *
 * <p>The numbers are those of the kernel's {@code asm-generic/errno-base.h} and
 * {@code asm-generic/errno.h}, which x86-64 and aarch64 (and arm, riscv, ppc, s390) share; the
 * architectures with other numbers (alpha, mips, parisc, sparc) are refused when the natives are
 * bound (see {@link Libc}). The texts are glibc's, in lower case, and do not depend on the
 * locale, so messages and logs read the same everywhere.
 */
public final class Errno {
    private Errno() {}

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int ENOEXEC = 8;
    public static final int EBADF = 9;
    public static final int ECHILD = 10;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int EXDEV = 18;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int ENFILE = 23;
    public static final int EMFILE = 24;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ERANGE = 34;
    public static final int EMLINK = 31;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOLCK = 37;
    public static final int ENOSYS = 38;
    public static final int ENOTEMPTY = 39;
    public static final int ELOOP = 40;
    /** No such extended attribute (ENODATA, 61 on x86-64 and aarch64; ENOATTR in glibc). */
    public static final int ENODATA = 61;
    /** Also ENOTSUP on Linux. */
    public static final int EOPNOTSUPP = 95;

    public static final int ESTALE = 116;
    public static final int EDQUOT = 122;

    /** Name and text of errno 0..40 (asm-generic/errno-base.h and the start of errno.h). */
    private static final String[][] BASE = {
        {"0", "success"},
        {"EPERM", "operation not permitted"},
        {"ENOENT", "no such file or directory"},
        {"ESRCH", "no such process"},
        {"EINTR", "interrupted system call"},
        {"EIO", "input/output error"},
        {"ENXIO", "no such device or address"},
        {"E2BIG", "argument list too long"},
        {"ENOEXEC", "exec format error"},
        {"EBADF", "bad file descriptor"},
        {"ECHILD", "no child processes"},
        {"EAGAIN", "resource temporarily unavailable"},
        {"ENOMEM", "cannot allocate memory"},
        {"EACCES", "permission denied"},
        {"EFAULT", "bad address"},
        {"ENOTBLK", "block device required"},
        {"EBUSY", "device or resource busy"},
        {"EEXIST", "file exists"},
        {"EXDEV", "invalid cross-device link"},
        {"ENODEV", "no such device"},
        {"ENOTDIR", "not a directory"},
        {"EISDIR", "is a directory"},
        {"EINVAL", "invalid argument"},
        {"ENFILE", "too many open files in system"},
        {"EMFILE", "too many open files"},
        {"ENOTTY", "inappropriate ioctl for device"},
        {"ETXTBSY", "text file busy"},
        {"EFBIG", "file too large"},
        {"ENOSPC", "no space left on device"},
        {"ESPIPE", "illegal seek"},
        {"EROFS", "read-only file system"},
        {"EMLINK", "too many links"},
        {"EPIPE", "broken pipe"},
        {"EDOM", "numerical argument out of domain"},
        {"ERANGE", "numerical result out of range"},
        {"EDEADLK", "resource deadlock avoided"},
        {"ENAMETOOLONG", "file name too long"},
        {"ENOLCK", "no locks available"},
        {"ENOSYS", "function not implemented"},
        {"ENOTEMPTY", "directory not empty"},
        {"ELOOP", "too many levels of symbolic links"},
    };

    /**
     * The error number of the last native call made by this thread: kept per thread by JNA, or
     * captured after every call by the FFM path ({@code Linker.Option.captureCallState}).
     */
    public static int last() {
        return Libc.NATIVES.errno();
    }

    /** Sets what {@link #last()} returns on this thread: to keep the error of a call across the cleanup after it. */
    static void set(int errno) {
        Libc.NATIVES.errno(errno);
    }

    /** The symbolic name of {@code errno}, such as {@code EACCES}, or {@code errno N} if it is not one we name. */
    public static String name(int errno) {
        if (errno > 0 && errno < BASE.length) {
            return BASE[errno][0];
        }
        switch (errno) {
            case EOPNOTSUPP:
                return "EOPNOTSUPP";
            case ENODATA:
                return "ENODATA";
            case 110:
                return "ETIMEDOUT";
            case ESTALE:
                return "ESTALE";
            case EDQUOT:
                return "EDQUOT";
            default:
                return "errno " + errno;
        }
    }

    /**
     * What {@code errno} means, for a message: {@code permission denied (EACCES)}. Numbers we do
     * not name get the C library's text and the number, {@code protocol error (errno 71)}.
     */
    public static String describe(int errno) {
        if (errno > 0 && errno < BASE.length) {
            return BASE[errno][1] + " (" + BASE[errno][0] + ")";
        }
        switch (errno) {
            case EOPNOTSUPP:
                return "operation not supported (EOPNOTSUPP)";
            case ENODATA:
                return "no data available (ENODATA)";
            case 110:
                return "connection timed out (ETIMEDOUT)";
            case ESTALE:
                return "stale file handle (ESTALE)";
            case EDQUOT:
                return "disk quota exceeded (EDQUOT)";
            default:
                String text = Libc.strerror(errno);
                return (text == null || text.isEmpty()
                                ? "error"
                                : text.substring(0, 1).toLowerCase(Locale.ROOT) + text.substring(1))
                        + " (errno " + errno + ")";
        }
    }

    /** {@link #describe} of the last error of this thread. */
    public static String describeLast() {
        return describe(last());
    }

    /** {@code rc}, or an {@link ErrnoException} with the last errno if {@code rc} is negative. */
    public static int check(int rc) {
        if (rc < 0) {
            throw new ErrnoException(last());
        }
        return rc;
    }

    /** {@code rc}, or an {@link ErrnoException} with the last errno if {@code rc} is negative. */
    public static long check(long rc) {
        if (rc < 0) {
            throw new ErrnoException(last());
        }
        return rc;
    }
}
