package dev.interlock.file.internal;

import dev.interlock.LockBackendException;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Log;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Internal API of Interlock (not for applications; may change in any release): the directory of
 * a file lock space, as both file backends ({@code flock:} and {@code dir:}) find, open, create
 * and check it, with one set of rules and one set of messages:
 * <ul>
 *   <li>opened as its path names it now, links included (the path may be a link the user chose),
 *       with {@code O_DIRECTORY}; everything below it is reached through the descriptor;</li>
 *   <li>reading (status, list, break) creates nothing: a missing directory is "no lock space at
 *       PATH (nothing was created)";</li>
 *   <li>the first acquisition creates it, never its parents: a shared file system that is not
 *       mounted must not turn into a private, local directory (two hosts would each lock their
 *       own copy), so a missing parent is refused, with the {@code mkdir} to run;</li>
 *   <li>identity checks ({@code st_dev}, {@code st_ino}): whether the path still names the
 *       directory a descriptor holds (it may have been renamed away or replaced);</li>
 *   <li>a directory every user may write is worth a warning: anyone could then take, break or
 *       block the locks.</li>
 * </ul>
 * What a backend does with a replaced directory is its own rule ({@code flock:} keeps the one it
 * opened, its holders being reported lost; {@code dir:} works on in the new one, like a new
 * process), and so is the network-file-system policy ({@code flock:} refuses one, {@code dir:} is
 * made for one). A failed call comes out as a {@link LockBackendException} that says what to do, with
 * the {@link ErrnoException} as its cause.
 */
public final class LockSpaceDirectory {
    private static final int DIR_FLAGS = LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC;

    private final Path path;
    private final byte[] pathBytes;
    private final String scheme;
    private final BackendFailures failures;

    /**
     * @param path the absolute lock directory
     * @param scheme {@code flock:} or {@code dir:}, for advice in messages
     * @param failures the backend's exceptions
     */
    public LockSpaceDirectory(Path path, String scheme, BackendFailures failures) {
        this.path = path;
        this.pathBytes = LibcFiles.path(path);
        this.scheme = scheme;
        this.failures = failures;
    }

    public Path path() {
        return path;
    }

    /**
     * Opens the directory as its path names it now; -1 if it does not exist.
     *
     * @param noFollow true to refuse a link in the last component (a directory this process has just made)
     * @throws LockBackendException if it is not a directory, or cannot be opened
     */
    public int openIfExists(boolean noFollow) {
        try {
            return NativeFiles.openat(
                    LibcFiles.AT_FDCWD, pathBytes, DIR_FLAGS | (noFollow ? LibcFiles.O_NOFOLLOW : 0), 0);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT) {
                return -1;
            }
            throw cannotOpen(e.errno());
        }
    }

    /**
     * Opens the directory for reading (status, list, break), which never creates it.
     *
     * @throws LockBackendException "no lock space at PATH (nothing was created)" if it does not exist
     */
    public int openForReading() {
        int fd = openIfExists(false);
        if (fd < 0) {
            throw noLockSpace();
        }
        return fd;
    }

    /** Why the directory could not be opened, as a backend error that says what to do. */
    public LockBackendException cannotOpen(int err) {
        if (err == Errno.ENOTDIR) {
            return failures.refused(
                    null,
                    path + " is not a directory (or a part of its path is not); give " + scheme
                            + " the path of a directory",
                    new ErrnoException(err));
        }
        return failures.refused(
                null,
                "cannot open the lock directory " + path + ": " + Errno.describe(err)
                        + (err == Errno.EACCES ? "; check the permissions of " + path + " and its parents" : ""),
                new ErrnoException(err));
    }

    /** What status, list and break say of a lock space that was never created. */
    public LockBackendException noLockSpace() {
        return failures.refused(null, "no lock space at " + path + " (nothing was created)", null);
    }

    /**
     * Refuses, at once, a directory that could never be created: its parent is missing.
     *
     * @param mkdir the command that makes it as the backend would ({@code mkdir -p -m 700})
     */
    public void requireParent(String mkdir) {
        Path parent = path.getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw failures.refused(
                    null,
                    "lock directory " + path + " does not exist, nor does its parent " + parent + "; create it ("
                            + mkdir + " " + path
                            + "), or check that the shared file system is mounted: Interlock does not create missing"
                            + " parents",
                    null);
        }
    }

    /**
     * Creates the directory (never its parents) with {@code mode} less the umask.
     *
     * @return true if this call made it, false if it existed already
     * @throws LockBackendException if its parent is missing, or it cannot be made
     */
    public boolean create(int mode, String mkdir) {
        try {
            NativeFiles.mkdirat(LibcFiles.AT_FDCWD, pathBytes, mode);
            return true;
        } catch (ErrnoException e) {
            if (e.errno() == Errno.EEXIST) {
                return false;
            }
            if (e.errno() == Errno.ENOENT) {
                requireParent(mkdir);
            }
            throw failures.refused(
                    null,
                    "the lock directory does not exist and cannot be created (" + path + ": " + reason(e.errno())
                            + "); create it, or give a path you may write",
                    e);
        }
    }

    /** The identity of what the path names now (following links), or null if nothing (or a part of the path is not a directory). */
    public LibcFiles.Statx identityNow() {
        try {
            return NativeFiles.statx(LibcFiles.AT_FDCWD, pathBytes, 0);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT || e.errno() == Errno.ENOTDIR) {
                return null;
            }
            throw failures.refused(
                    null, "looking up the lock directory " + path + " failed: " + Errno.describe(e.errno()), e);
        }
    }

    /**
     * Warns, in the backend's own log, that everyone may write the directory: anyone can then
     * take, break or block these locks; {@code what} says how, for this backend.
     */
    public void warnIfWritableByEveryone(Log log, int mode, String description, String what) {
        if ((mode & 0002) != 0) {
            log.warn(
                    "{} - the lock directory {} is writable by every user: anyone can {}; restrict it to the users that share"
                            + " these locks (e.g. chmod 2770 and a common group)",
                    description,
                    path,
                    what);
        }
    }

    /** The error's words without its symbolic name: "operation not permitted". */
    private static String reason(int err) {
        return Errno.describe(err).replaceFirst(" \\([A-Za-z0-9 ]+\\)$", "");
    }
}
