package dev.interlock.file.flock;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;

/**
 * The {@code .gates} directory of a {@code flock:} space, where waiters queue (a writer that waits
 * holds its name's gate, keeping new readers out): opened without following links, made with the
 * lock directory's permissions, refused if it could be someone else's to tamper with.
 */
final class FlockGates {
    private FlockGates() {}

    /**
     * Opens {@code .gates} relative to the lock directory without following a link, making it if
     * missing. A {@code .gates} that is a link or not a directory is refused, and so is one that
     * belongs to another user when everyone may write the lock directory: its owner could remove
     * or replace gate files. The whole space is refused, not just the gate, because shared holders
     * update the fencing token and their record while they hold the gate: without a trustworthy
     * gate two readers could interleave those writes, and writers could be starved.
     */
    static int open(FlockBackend backend, int d) {
        for (int round = 0; round < 3; round++) {
            int err;
            try {
                int g = NativeFiles.openat(
                        d, FlockBackend.GATES_BYTES, FlockBackend.DIR_FLAGS | LibcFiles.O_NOFOLLOW, 0);
                return check(backend, g);
            } catch (ErrnoException e) {
                err = e.errno();
            }
            if (err == Errno.ENOENT) {
                try {
                    NativeFiles.mkdirat(d, FlockBackend.GATES_BYTES, 0700);
                } catch (ErrnoException e) {
                    if (e.errno() == Errno.EEXIST) {
                        continue;
                    }
                    throw backend.failure(
                            null, "cannot create the gate directory " + backend.gateDir, e.errno(), false);
                }
                int g;
                try {
                    g = NativeFiles.openat(
                            d, FlockBackend.GATES_BYTES, FlockBackend.DIR_FLAGS | LibcFiles.O_NOFOLLOW, 0);
                } catch (ErrnoException e) {
                    continue;
                }
                // Same permissions as the lock directory (sticky and setgid bits included), so
                // everyone who may lock there may queue there.
                LibcFiles.fchmod(g, backend.dirMode);
                return check(backend, g);
            }
            if (err == Errno.ENOTDIR || err == Errno.ELOOP) {
                LibcFiles.Statx st = LibcFiles.lstatAt(d, FlockBackend.GATES_BYTES);
                boolean link = st != null && st.isSymbolicLink();
                throw backend.failures.refused(
                        null,
                        backend.gateDir + " is "
                                + (link
                                        ? "a symbolic link, which Interlock never follows (it may have been planted to make you create files elsewhere)"
                                        : "not a directory")
                                + "; remove it (rm " + backend.gateDir + ") and Interlock makes a new one",
                        null);
            }
            throw backend.failure(null, "cannot open the gate directory " + backend.gateDir, err, false);
        }
        throw backend.failures.unreachable(
                null,
                backend.gateDir + " keeps being removed while we open it; stop whatever deletes files in "
                        + backend.dir,
                null);
    }

    /** Returns {@code g} if the gate directory it is open on may be trusted; closes it and throws if not. */
    private static int check(FlockBackend backend, int g) {
        LibcFiles.Statx st;
        try {
            st = NativeFiles.fstat(g);
        } catch (ErrnoException e) {
            LibcFiles.close(g);
            throw backend.failure(null, "cannot check the gate directory " + backend.gateDir, e.errno(), false);
        }
        boolean everyoneWrites = (backend.dirMode & 01000) != 0 || (backend.dirMode & 0002) != 0;
        if (everyoneWrites && st.uid() != LibcFiles.geteuid() && st.uid() != backend.dirOwner && st.uid() != 0) {
            LibcFiles.close(g);
            throw backend.failures.refused(
                    null,
                    String.format(
                            "%s belongs to uid %d, not to you (uid %d) nor to"
                                    + " the owner of %s (uid %d): in a directory every user can write, its owner could remove or replace the"
                                    + " gate files, so readers could write the fencing token at the same time and writers could be starved;"
                                    + " have it removed (rm -r %s), have the owner of %s make it (mkdir -m %o %s), or use a directory"
                                    + " writable only by the users that share these locks",
                            backend.gateDir,
                            st.uid(),
                            LibcFiles.geteuid(),
                            backend.dir,
                            backend.dirOwner,
                            backend.gateDir,
                            backend.dir,
                            backend.dirMode,
                            backend.gateDir),
                    null);
        }
        return g;
    }
}
