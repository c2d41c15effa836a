package dev.interlock.file.dir;

import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.support.Log;
import java.nio.charset.StandardCharsets;

/**
 * The making of a lock directory (docs/dir-protocol.md, 4.1): prepared complete under a
 * temporary name, with its name record and first gate, then renamed into place, so that nobody
 * ever sees one half made.
 */
final class DirCreation {
    private static final Log log = Log.of(DirLockBackend.class);

    private DirCreation() {}

    /**
     * Creates a lock directory atomically: a private temporary directory gets the name record and
     * the first gate {@code F.0.0.<nonce>}, then is renamed to the lock's directory name. If that
     * name exists already (someone else won), the temporary directory is emptied and removed.
     */
    static void createLockDir(DirLockBackend backend, int rootFd, String name, String dirName) {
        String tmp = ".init." + DirLockBackend.nonce();
        int rootMode;
        try {
            NativeFiles.mkdirat(rootFd, tmp, 0700);
            // Lock directories get the root's permissions whatever this process's umask, so that every
            // user who may use the root may also rename the gate inside (no sticky bit: it would stop that).
            rootMode = NativeFiles.lstatMode(rootFd, ".");
            NativeFiles.fchmodat(rootFd, tmp, rootMode & 02777, 0);
        } catch (ErrnoException e) {
            throw backend.failure(name, "creating the lock directory failed", e);
        }
        boolean moved = false;
        try {
            int tfd = NativeFiles.openat(
                    rootFd,
                    tmp,
                    LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC,
                    0);
            try {
                int f = NativeFiles.openat(tfd, DirLockBackend.NAME_RECORD, LibcFiles.O_CREATE_NEW_NO_FOLLOW, 0444);
                try {
                    NativeFiles.fchmod(f, DirLockBackend.readableLike(rootMode));
                    NativeFiles.writeFully(
                            f,
                            ("interlock-dir " + DirEntries.FORMAT + "\nname " + DirNames.recordEscape(name) + "\n")
                                    .getBytes(StandardCharsets.UTF_8));
                } finally {
                    NativeFiles.close(f);
                }
                int g = NativeFiles.openat(
                        tfd, Gate.free(0, 0, DirLockBackend.nonce()), LibcFiles.O_CREATE_NEW_NO_FOLLOW, 0444);
                try {
                    NativeFiles.fchmod(g, DirLockBackend.readableLike(rootMode));
                } finally {
                    NativeFiles.close(g);
                }
            } finally {
                NativeFiles.close(tfd);
            }
            try {
                NativeFiles.renameat(rootFd, tmp, rootFd, dirName);
                moved = true;
                log.debug("{} - created lock directory {} for '{}'", backend.description, dirName, name);
            } catch (ErrnoException e) {
                if (e.errno() != Errno.EEXIST && e.errno() != Errno.ENOTEMPTY && e.errno() != Errno.ENOENT) {
                    throw e;
                }
            }
        } catch (ErrnoException e) {
            throw backend.failure(name, "creating the lock directory failed", e);
        } finally {
            if (!moved) {
                removeTempDir(backend, rootFd, tmp);
            }
        }
    }

    private static void removeTempDir(DirLockBackend backend, int rootFd, String tmp) {
        try {
            int tfd = NativeFiles.openat(
                    rootFd,
                    tmp,
                    LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC,
                    0);
            try {
                for (NativeFiles.Entry e : NativeFiles.list(tfd)) {
                    NativeFiles.unlinkat(tfd, e.name(), 0);
                }
            } finally {
                NativeFiles.close(tfd);
            }
            NativeFiles.unlinkat(rootFd, tmp, LibcFiles.AT_REMOVEDIR);
        } catch (ErrnoException e) {
            // A lost-reply rename moved it after all, or it is already gone: nothing to clean up.
            log.debug("{} - cleaning up {}: {}", backend.description, tmp, e.getMessage());
        }
    }
}
