package dev.interlock.file.dir;

import dev.interlock.file.internal.EntryWatcher;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcEvents;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.LossChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The holders of one opened root, told at once when their lock directory is renamed away or
 * removed, or the root itself is renamed, on this host: the lease is then reported lost through
 * its {@link LossChannel} (so {@code interlock run} stops its command) instead of at the next
 * renewal, a third of a lease later. The root is watched, not each lock directory: the kernel
 * tells a directory's parent of its removal at once, but the directory itself only when the
 * holder's descriptor closes. On other hosts (NFS) nothing is heard: the renewal still checks
 * (docs/dir-protocol.md 4.5).
 *
 * <p>An event is a reason to look, not a verdict: it is read a moment after it happened, when a
 * new lock directory of the same name may already exist with a new holder (a newcomer on the old
 * path is granted at once). So the paths are looked up again, as the renewal does, and only the
 * holders whose directory is no longer the one the path names are told.
 */
final class DirMoves implements EntryWatcher.Listener, AutoCloseable {
    private final DirLockBackend backend;
    private final DirLockBackend.Root root;
    private final EntryWatcher.Registration registration;
    /** Lock directory name -> the loss channels of the grants held in it, with the identity of the directory each holds. */
    private final Map<String, Map<LossChannel, LibcFiles.Statx>> holders = new ConcurrentHashMap<>();

    /** What a holder closes at release to stop hearing of moves. */
    interface Held extends AutoCloseable {
        @Override
        void close();
    }

    /** Watches {@code root} (open in {@code backend}); if inotify cannot, holders learn of moves at their renewal only. */
    DirMoves(DirLockBackend backend, DirLockBackend.Root root) {
        this.backend = backend;
        this.root = root;
        this.registration = EntryWatcher.process().watch(root.fd, this);
    }

    /**
     * Reports to {@code channel} a move or removal of the lock directory {@code dirName}, which
     * was {@code id} when the grant was made, until the returned handle is closed.
     */
    Held hold(String dirName, LibcFiles.Statx id, LossChannel channel) {
        if (registration == null) {
            return () -> {};
        }
        holders.computeIfAbsent(dirName, k -> new ConcurrentHashMap<>()).put(channel, id);
        return () -> holders.computeIfPresent(dirName, (k, map) -> {
            map.remove(channel);
            return map.isEmpty() ? null : map;
        });
    }

    @Override
    public void changed(int mask, String name) {
        if (name == null) {
            if ((mask & (LibcEvents.IN_MOVE_SELF | LibcEvents.IN_DELETE_SELF)) != 0 && rootMoved()) {
                // The words of the renewal's check (DirLockDir.moved()) for the same state, so a holder hears one
                // story.
                String why =
                        "the lock directory " + backend.root + " was removed or moved away (seen at once on this host);"
                                + " a new lock of that name may now be held by someone else";
                holders.values().forEach(map -> map.keySet().forEach(c -> c.lost(why, null)));
            }
            return;
        }
        Map<LossChannel, LibcFiles.Statx> map = holders.get(name);
        if (map == null || (mask & (LibcEvents.IN_MOVED_FROM | LibcEvents.IN_DELETE)) == 0) {
            return;
        }
        LibcFiles.Statx now;
        try {
            now = NativeFiles.statx(root.fd, name, LibcFiles.AT_SYMLINK_NOFOLLOW);
        } catch (ErrnoException e) {
            if (e.errno() != Errno.ENOENT && e.errno() != Errno.ENOTDIR) {
                return; // cannot tell: the renewal looks again
            }
            now = null;
        }
        String what = (mask & LibcEvents.IN_DELETE) != 0 ? "removed" : "moved or replaced";
        String why = "the lock directory " + backend.root.resolve(name) + " was " + what
                + " (seen at once on this host); a new lock of that name may now be held by someone else";
        for (Map.Entry<LossChannel, LibcFiles.Statx> held : map.entrySet()) {
            if (!held.getValue().sameFile(now)) {
                held.getKey().lost(why, null);
            }
        }
    }

    /** True if the root path no longer names the root we hold; false if it does or if it cannot be told (the renewal looks again). */
    private boolean rootMoved() {
        try {
            return !root.id.sameFile(backend.rootIdentityNow());
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public void close() {
        if (registration != null) {
            registration.close();
        }
    }
}
