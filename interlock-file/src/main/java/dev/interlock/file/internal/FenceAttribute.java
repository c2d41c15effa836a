package dev.interlock.file.internal;

import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.OptionalLong;

/**
 * The fencing token a replaced file carries: the extended attribute {@value #NAME}, set on the
 * temporary file before the commit so that content and token land together (docs/fencing.md).
 * One per {@link ReplaceTarget}, whose file its messages name.
 */
final class FenceAttribute {
    /** The extended attribute that carries a file's fencing token. */
    static final String NAME = "user.interlock.fence";

    private static final byte[] FENCE_NAME = LibcFiles.cstring(NAME.getBytes(StandardCharsets.US_ASCII));

    private final ReplaceTarget target;

    FenceAttribute(ReplaceTarget target) {
        this.target = target;
    }

    /**
     * Marks the temporary file with fencing token {@code token} (before the commit, which
     * publishes content and token together).
     *
     * @throws AtomicFileException {@link Reason#FENCE_UNSUPPORTED} if the file system keeps no user extended attributes
     */
    void set(ReplaceTarget.Temp t, long token) throws AtomicFileException {
        if (token < 0) {
            throw new IllegalArgumentException("a fencing token is never negative: " + token);
        }
        setValue(t, Long.toString(token).getBytes(StandardCharsets.US_ASCII));
    }

    void setValue(ReplaceTarget.Temp t, byte[] value) throws AtomicFileException {
        try {
            NativeFiles.fsetxattr(t.fd(), FENCE_NAME, value);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.EOPNOTSUPP) {
                throw new AtomicFileException(
                        Reason.FENCE_UNSUPPORTED,
                        "cannot fence writes to " + target.path() + ": the file system of "
                                + target.directory() + " keeps no user extended attributes (" + e.getMessage()
                                + "), where the fencing"
                                + " token travels with the content; put the file on one that does (ext4, xfs, btrfs, tmpfs on Linux 6.6+,"
                                + " NFS 4.2 with xattr support) or write it unfenced; " + target.path()
                                + " is unchanged");
            }
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot set the fencing token of the temporary file " + t.shown() + ": " + e.getMessage() + "; "
                            + target.path() + " is unchanged");
        }
    }

    /**
     * The fencing token the file carries now, or empty if it carries none (or does not exist, or
     * its file system keeps no user extended attributes).
     *
     * @throws AtomicFileException {@link Reason#IO} if the attribute cannot be read or does not hold a token
     */
    OptionalLong ofFile() throws AtomicFileException {
        ReplaceTarget.Opened content = target.openContent();
        if (content == null) {
            return OptionalLong.empty();
        }
        try {
            byte[] raw = read(content.fd());
            return raw == null ? OptionalLong.empty() : OptionalLong.of(parse(raw));
        } finally {
            LibcFiles.close(content.fd());
        }
    }

    /** The raw value of the fence attribute of an open file; null if it has none. */
    byte[] read(int fd) throws AtomicFileException {
        byte[] buf = new byte[64];
        long n;
        try {
            n = NativeFiles.fgetxattr(fd, FENCE_NAME, buf);
        } catch (ErrnoException e) {
            int errno = e.errno();
            if (errno == Errno.ENODATA || errno == Errno.EOPNOTSUPP) {
                return null;
            }
            if (errno == Errno.ERANGE) {
                throw new AtomicFileException(
                        Reason.IO,
                        target.path() + " carries a fencing attribute " + NAME
                                + " longer than any token (more than 64 bytes); it was not written by Interlock's rules (docs/fencing.md):"
                                + " remove it with setfattr -x " + NAME + " once you know why; the file is unchanged");
            }
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot read the fencing token of " + target.path() + ": " + Errno.describe(errno)
                            + "; it is unchanged");
        }
        return Arrays.copyOf(buf, (int) n);
    }

    /** The token in an attribute value: 1 to 19 ASCII digits, no sign, no leading zero (except "0"), within a long. */
    long parse(byte[] raw) throws AtomicFileException {
        OptionalLong token = tokenOrEmpty(raw);
        if (token.isPresent()) {
            return token.getAsLong();
        }
        throw new AtomicFileException(
                Reason.IO,
                target.path() + " carries a fencing attribute " + NAME + " that is not a"
                        + " token (decimal digits): \"" + new String(raw, StandardCharsets.ISO_8859_1)
                        + "\"; it was not written by"
                        + " Interlock's rules (docs/fencing.md), so no fenced write trusts it: remove it with setfattr -x "
                        + NAME + " once you know why; the file is unchanged");
    }

    /** The raw fence attribute of what the file's name holds now; null if none (or no file, or not a regular file). */
    byte[] current() throws AtomicFileException {
        int fd;
        try {
            fd = NativeFiles.openat(target.dirfd, target.cname, LibcFiles.O_READ_NO_FOLLOW, 0);
        } catch (ErrnoException e) {
            int errno = e.errno();
            if (errno == Errno.ENOENT) {
                return null;
            }
            ReplaceTarget.Stat now = target.lstat(target.cname, target.path());
            if (now != null) {
                NotRegularFile.refuse(target, now);
            }
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot open " + target.path() + " to read its fencing token: " + Errno.describe(errno)
                            + "; it is unchanged");
        }
        try {
            LibcFiles.Statx st = LibcFiles.fstat(fd);
            if (st != null && !st.isRegularFile()) {
                NotRegularFile.refuse(target, ReplaceTarget.Stat.of(st));
            }
            return read(fd);
        } finally {
            LibcFiles.close(fd);
        }
    }

    /** The token in an attribute value (see {@link #parseToken}), or empty if it holds none. */
    static OptionalLong tokenOrEmpty(byte[] raw) {
        if (raw.length < 1 || raw.length > 19 || (raw[0] == '0' && raw.length > 1)) {
            return OptionalLong.empty();
        }
        for (byte b : raw) {
            if (b < '0' || b > '9') {
                return OptionalLong.empty();
            }
        }
        try {
            return OptionalLong.of(Long.parseLong(new String(raw, StandardCharsets.US_ASCII)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
