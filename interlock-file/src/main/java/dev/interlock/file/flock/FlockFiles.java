package dev.interlock.file.flock;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.Ids;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.support.LockNames;
import java.nio.file.Path;

/**
 * The lock and gate files of a {@code flock:} space: opened relative to their directory's
 * descriptor without following a link (read-only where they cannot be written, since flock(2)
 * needs no write access), created with the lock directory's permissions whatever the umask, and
 * read whole for their fencing token and records. Kept apart from {@link FlockBackend}, which
 * owns the directories these files live in.
 */
final class FlockFiles {
    private static final int MAX_READ = 1 << 16;
    private static final int FILE_FLAGS =
            LibcFiles.O_RDWR | LibcFiles.O_CREAT | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC | LibcFiles.O_NOCTTY;

    /** Opening a lock file to read or to lock read-only: O_NONBLOCK so that a FIFO planted under its name cannot block. */
    static final int READ_ONLY_FLAGS = LibcFiles.O_READ_NO_FOLLOW;

    private FlockFiles() {}

    /**
     * Opens a lock file (in the lock directory) or gate file (in {@code .gates}) by its name
     * relative to that directory's descriptor, never following a link; returns fd, negative =
     * read-only fd encoded as ~fd.
     */
    static int open(FlockBackend backend, String name, String fileName, byte[] fileBytes, boolean gate) {
        int at = gate ? backend.gatesFd : backend.dirFd;
        int err;
        try {
            return openOrCreate(backend, at, fileBytes);
        } catch (ErrnoException e) {
            err = e.errno();
        }
        if (err == Errno.EACCES || err == Errno.EROFS || err == Errno.EPERM) {
            // flock(2) needs no write access on a local file system: lock it read-only.
            // O_NONBLOCK: a FIFO planted under that name must not block this open.
            int ro = -1;
            try {
                ro = NativeFiles.openat(at, fileBytes, READ_ONLY_FLAGS, 0);
            } catch (ErrnoException e) {
                // not even readable: the error of the read-write open is the one to report
            }
            if (ro >= 0) {
                if (gate) {
                    return ro;
                }
                backend.warnOnce(
                        "ro:" + name,
                        "{} - lock file for '{}' is not writable ({}); holding it read-only, with clock-based fencing tokens",
                        backend.description,
                        name,
                        Errno.describe(err));
                return ~ro;
            }
        }
        Path file = gate ? backend.gateDir.resolve(fileName) : backend.dir.resolve(fileName);
        if (err == Errno.EACCES) {
            LibcFiles.Statx st = LibcFiles.lstatAt(at, fileBytes);
            if (st != null && st.isRegularFile()) {
                throw backend.failures.refused(
                        name,
                        "cannot open "
                                + (gate ? "gate" : "lock") + " file " + file + ": permission denied; it has mode "
                                + String.format("%04o", st.mode() & 07777) + " and belongs to " + Ids.user(st.uid())
                                + " (made by an older version under a restrictive umask?): give every user of "
                                + backend.dir
                                + " read and write access to it (chmod " + String.format("%04o", backend.dirMode & 0666)
                                + " "
                                + file + ")",
                        null);
            }
        }
        if (err == Errno.EISDIR) {
            throw backend.failures.refused(
                    name, file + " is a directory, not a lock file; remove it or use another name", null);
        }
        throw backend.failure(name, "cannot open " + (gate ? "gate" : "lock") + " file " + file, err, false);
    }

    /**
     * Opens a lock or gate file, creating it if it does not exist. One that this call creates gets
     * the lock directory's read and write bits through its descriptor, whatever this process's
     * umask: under umask 077 it would be 0600, and the directory's other users could not open it.
     * The usual case, an existing file, costs the one open as before (and no exception: lock files
     * are never removed by us, so ENOENT comes once per name). Throws {@link ErrnoException} on failure.
     */
    private static int openOrCreate(FlockBackend backend, int at, byte[] fileBytes) {
        while (true) {
            try {
                return NativeFiles.openat(at, fileBytes, FILE_FLAGS & ~LibcFiles.O_CREAT, 0);
            } catch (ErrnoException e) {
                if (e.errno() != Errno.ENOENT) {
                    throw e;
                }
            }
            try {
                int fd = NativeFiles.openat(at, fileBytes, FILE_FLAGS | LibcFiles.O_EXCL, 0600);
                LibcFiles.fchmod(fd, backend.dirMode & 0666); // best effort: the creator can always use it
                return fd;
            } catch (ErrnoException e) {
                if (e.errno() != Errno.EEXIST) {
                    throw e;
                }
            }
            // made by someone else between the two opens: open theirs
        }
    }

    /** {@link #readAll}, for a lock file that an acquisition holds: a failure to read it is the backend's (transient). */
    static byte[] readLockFile(FlockBackend backend, String name, int fd, int[] lenOut) {
        try {
            return readAll(fd, lenOut);
        } catch (ErrnoException e) {
            throw backend.failure(name, "cannot read lock file", e.errno(), true);
        }
    }

    /** Reads the start of a lock file (all of it up to 64 KiB); lenOut[0] is the length. Throws {@link ErrnoException} if it cannot be read. */
    static byte[] readAll(int fd, int[] lenOut) {
        byte[] buf = new byte[512];
        long n = NativeFiles.pread(fd, buf, buf.length, 0);
        if (n == buf.length) {
            buf = new byte[MAX_READ];
            n = NativeFiles.pread(fd, buf, buf.length, 0);
        }
        lenOut[0] = (int) n;
        return buf;
    }

    /** Writes a lock file's new content over its old one, cutting what is left of a longer old content. */
    static void write(FlockBackend backend, String name, int fd, byte[] out, int oldLength) {
        long w;
        try {
            w = NativeFiles.pwrite(fd, out, out.length, 0);
        } catch (ErrnoException e) {
            throw backend.failure(name, "cannot write the fencing token to the lock file", e.errno(), false);
        }
        if (w != out.length) {
            throw backend.failure(name, "cannot write the fencing token to the lock file", Errno.ENOSPC, false);
        }
        if (oldLength > out.length) {
            try {
                NativeFiles.ftruncate(fd, out.length);
            } catch (ErrnoException e) {
                throw backend.failure(name, "cannot truncate the lock file", e.errno(), false);
            }
        }
    }

    /** Refuses a hashed lock file that records another name than {@code name}: a SHA-256 collision. */
    static void checkStoredName(FlockBackend backend, String name, String fileName, LockFileContent content) {
        if (NameMapping.isHashed(fileName)
                && content.storedName.isPresent()
                && !content.storedName.get().equals(name)) {
            throw backend.failures.refused(
                    name,
                    "maps to " + fileName + ", which belongs to " + LockNames.quote(content.storedName.get())
                            + " (SHA-256 collision); use a shorter name",
                    null);
        }
    }
}
