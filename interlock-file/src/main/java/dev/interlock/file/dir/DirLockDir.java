package dev.interlock.file.dir;

import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.file.dir.DirEntries.Beat;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Permit;
import dev.interlock.file.dir.DirEntries.Reader;
import dev.interlock.file.dir.DirEntries.Waiter;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.LossChannel;
import dev.interlock.spi.support.LockNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * One open lock directory: a descriptor opened without following symlinks, and the few atomic
 * operations of the protocol on names inside it. Not thread-safe; owned by one attempt or grant.
 */
final class DirLockDir implements AutoCloseable {
    final DirLockBackend backend;
    /** The root this directory was opened in (its descriptor stays open as long as the space). */
    private final DirLockBackend.Root root;

    /** Listings in one try without exactly one gate before the directory is declared damaged. */
    private static final int GATE_PATIENCE = 20;

    final String name;
    final String dirName;
    private int fd;
    /** The identity of {@link #fd} (it never changes). */
    private final LibcFiles.Statx id;

    DirLockDir(
            DirLockBackend backend, DirLockBackend.Root root, String name, String dirName, int fd, LibcFiles.Statx id) {
        this.backend = backend;
        this.root = root;
        this.name = name;
        this.dirName = dirName;
        this.fd = fd;
        this.id = id;
    }

    /** The descriptor of this lock directory (the process's inotify watcher watches it through /proc/self/fd). */
    int fd() {
        return fd;
    }

    /**
     * Reports a rename or removal of this lock directory (or of its root) on this host to
     * {@code channel} at once, until the returned handle is closed.
     */
    DirMoves.Held reportMoves(LossChannel channel) {
        return root.moves(backend).hold(dirName, id, channel);
    }

    /** The path of this lock directory, for messages. */
    String path() {
        return backend.root.resolve(dirName).toString();
    }

    /**
     * Null if the paths still lead to the directories we hold open: the root path as given
     * (following links, it may be a symlink the user chose) names the root we opened, and that
     * root's entry {@code dirName} (not followed) is this directory. Otherwise what happened, for
     * the lost-lock message: a lock held in a directory that was renamed or replaced is no longer
     * the lock others take by that name, so the holder must stop (as it must when its lock file is
     * replaced under {@code flock:}).
     *
     * @throws LockBackendException if a lookup fails otherwise (a failed check, not a verdict)
     */
    String moved() {
        LibcFiles.Statx rootNow = backend.rootIdentityNow();
        if (rootNow == null) {
            return "the lock directory " + backend.root + " was removed or moved away";
        }
        if (!rootNow.sameFile(root.id)) {
            return "the lock directory " + backend.root + " was moved or replaced";
        }
        LibcFiles.Statx now;
        try {
            now = NativeFiles.statx(root.fd, dirName, LibcFiles.AT_SYMLINK_NOFOLLOW);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT || e.errno() == Errno.ENOTDIR || e.errno() == Errno.ESTALE) {
                return list().gone
                        ? "the lock directory " + path() + " was removed"
                        : "the lock directory " + path() + " was moved away";
            }
            throw failure("looking up the lock directory " + path() + " failed", e);
        }
        return now.sameFile(id) ? null : "the lock directory " + path() + " was moved or replaced";
    }

    /** Tests only: renames whose target matches are reported as ENOENT after they succeed, as over NFS with a lost reply. */
    static volatile Predicate<String> lostReply;

    /**
     * Where a listing gets its entries and, for entries whose {@code d_type} is
     * {@code DT_UNKNOWN} (NFSv3 READDIR, some other file systems), their types.
     */
    interface EntrySource {
        /** The entries of the directory {@code dirfd}, read afresh (see {@link NativeFiles#list}). */
        List<NativeFiles.Entry> list(int dirfd);

        /** st_mode of {@code entry} without following it; -1 if it no longer exists. */
        int lstatMode(int dirfd, String entry);
    }

    static final EntrySource SYSTEM = new EntrySource() {
        @Override
        public List<NativeFiles.Entry> list(int dirfd) {
            return NativeFiles.list(dirfd);
        }

        @Override
        public int lstatMode(int dirfd, String entry) {
            return NativeFiles.lstatMode(dirfd, entry);
        }
    };

    /** Tests only: stands in for the file system's entry types (to force DT_UNKNOWN and inject lstat failures). */
    static volatile EntrySource entrySource = SYSTEM;

    /** What one listing of the lock directory showed. */
    static final class Snapshot {
        final List<Gate> gates = new ArrayList<>();
        final List<Reader> readers = new ArrayList<>();
        final List<Permit> permits = new ArrayList<>();
        final Map<Long, Beat> beats = new HashMap<>();
        final List<Waiter> waiters = new ArrayList<>();
        final List<String> foreign = new ArrayList<>();
        final List<String> names = new ArrayList<>();
        /** True if the lock directory itself was removed (our descriptor names a deleted directory). */
        boolean gone;

        boolean contains(String entry) {
            return names.contains(entry);
        }

        /** The only gate, or null if none or several were seen (a rename in flight, or tampering). */
        Gate gate() {
            return gates.size() == 1 ? gates.get(0) : null;
        }
    }

    /** Lists the directory afresh and parses every entry; foreign entries are collected, never acted on. */
    Snapshot list() {
        List<NativeFiles.Entry> entries;
        Snapshot s = new Snapshot();
        try {
            entries = entrySource.list(fd);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT) {
                s.gone = true;
                return s;
            }
            throw failure("listing the lock directory failed", e);
        }
        for (NativeFiles.Entry e : entries) {
            String n = e.name();
            if (n.equals(DirLockBackend.NAME_RECORD) || n.startsWith(".")) {
                s.names.add(n);
                continue;
            }
            Object entry = parse(n);
            boolean regular;
            if (entry != null && e.type() == LibcFiles.DT_UNKNOWN) {
                // The file system did not say what this is: ask. Ignoring it instead could hide a
                // reader from a writer, so an entry whose type cannot be read fails the listing.
                int mode;
                try {
                    mode = entrySource.lstatMode(fd, n);
                } catch (ErrnoException ex) {
                    throw failure("cannot tell what the entry " + n + " is, so nothing was granted; lstat failed", ex);
                }
                if (mode == -1) {
                    continue; // renamed or removed since the readdir: it is not there
                }
                regular = (mode & 0170000) == 0100000;
            } else {
                regular = e.type() == LibcFiles.DT_REG;
            }
            s.names.add(n);
            if (entry == null || !regular) {
                s.foreign.add(n); // names and types only Interlock makes, else foreign (directories, symlinks, junk)
            } else if (entry instanceof Gate g) {
                s.gates.add(g);
            } else if (entry instanceof Reader r) {
                s.readers.add(r);
            } else if (entry instanceof Permit p) {
                s.permits.add(p);
            } else if (entry instanceof Beat b) {
                s.beats.merge(b.token(), b, (x, y) -> x.beat() >= y.beat() ? x : y);
            } else {
                s.waiters.add((Waiter) entry);
            }
        }
        if (s.gates.size() == 1) {
            backend.hint(dirName, s.gates.get(0).name());
        }
        if (!s.foreign.isEmpty()) {
            backend.reportForeign(name, dirName, s.foreign);
        }
        return s;
    }

    /**
     * Lists the directory until a listing shows its one gate. A listing may miss a gate being
     * renamed, or show it under both names, so the directory is listed again; if it still does not show exactly one gate after
     * {@value #GATE_PATIENCE} listings, it is damaged (a gate deleted or planted) and nothing is granted.
     */
    Snapshot listSettled() {
        Snapshot s = list();
        for (int i = 1; s.gate() == null && !s.gone && i < GATE_PATIENCE; i++) {
            Thread.onSpinWait();
            s = list();
        }
        if (s.gate() != null) {
            return s;
        }
        if (s.gone) {
            throw backend.failures.unreachable(
                    name,
                    "the lock directory " + dirName
                            + " was removed while we were using it; nothing was granted, try again",
                    null);
        }
        if (s.gates.isEmpty() && !hasNameRecord()) {
            // No gate and no name record: never a lock directory (a user's home under a root such as
            // /home), not a damaged one. It is someone's data: never advise removing it.
            throw backend.failures.refused(
                    name,
                    dirName
                            + " in the lock space's directory is not a lock directory (no gate file, no name record: Interlock"
                            + " did not make it). Nothing was granted and it was left alone: use another lock name, or a directory that holds"
                            + " only Interlock's locks",
                    null);
        }
        throw backend.failures.refused(
                name,
                "the lock directory " + dirName + " has "
                        + (s.gates.isEmpty() ? "no gate file" : s.gates.size() + " gate files " + names(s.gates))
                        + " in " + GATE_PATIENCE
                        + " listings; it was damaged or tampered with. Nothing was granted. Stop every user of the lock, then remove "
                        + dirName + " (it is recreated on next use)",
                null);
    }

    /** True if the lock directory has its name record (or it cannot be told): every directory Interlock made has one. */
    private boolean hasNameRecord() {
        try {
            return NativeFiles.lstatMode(fd, DirLockBackend.NAME_RECORD) != -1;
        } catch (ErrnoException e) {
            return true;
        }
    }

    private static List<String> names(List<Gate> gates) {
        List<String> out = new ArrayList<>();
        gates.forEach(g -> out.add(g.name()));
        return out;
    }

    /** The protocol entry a name denotes ({@link Gate}, {@link Reader}, {@link Permit}, {@link Beat} or {@link Waiter}), or null. */
    private static Object parse(String n) {
        switch (n.charAt(0)) {
            case 'F':
            case 'X':
                return Gate.parse(n).orElse(null);
            case 'R':
                return Reader.parse(n).orElse(null);
            case 'P':
                return Permit.parse(n).orElse(null);
            case 'B':
                return Beat.parse(n).orElse(null);
            case 'Q':
                return Waiter.parse(n).orElse(null);
            default:
                return null;
        }
    }

    /**
     * Renames {@code from} to {@code to}: the compare-and-set of the protocol. True if this call
     * moved it; false if {@code from} no longer exists. After ENOENT the target is checked, since
     * over NFS a retransmitted rename whose first reply was lost reports ENOENT although it
     * succeeded; {@code to} is always a name only this caller can produce.
     */
    boolean cas(String from, String to) {
        try {
            NativeFiles.renameat(fd, from, fd, to);
            Predicate<String> lose = lostReply;
            if (lose != null && lose.test(to)) {
                // Test hook: the rename happened, but its reply was "lost" and a retransmission said ENOENT.
                throw new ErrnoException(Errno.ENOENT);
            }
            if (to.charAt(0) == 'F' || to.charAt(0) == 'X') {
                backend.hint(dirName, to);
            }
            return true;
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT) {
                return exists(to);
            }
            throw failure("renaming " + from + " to " + to + " failed", e);
        }
    }

    /** Creates the empty file {@code entry} (a name only this caller can produce). EEXIST means a lost reply: ours. */
    void create(String entry) {
        try {
            int f = NativeFiles.openat(fd, entry, LibcFiles.O_CREATE_NEW_NO_FOLLOW, 0444);
            NativeFiles.close(f);
        } catch (ErrnoException e) {
            if (e.errno() != Errno.EEXIST) {
                throw failure("creating " + entry + " failed", e);
            }
        }
    }

    /**
     * Publishes {@code entry} (a name only this caller can produce) as a second name of the file
     * {@code existing} this caller just created: a reader's or a permit's entry beside its heartbeat
     * (docs/dir-protocol.md 4.3 and 4.8). Others read names only, so the entry is the same to them
     * as one created on its own; a link allocates no inode, and removing the pair frees one inode
     * instead of two, which halves the file system's work for the entry (measured in
     * docs/benchmarks.md). Nothing is made if {@code existing} is gone (our heartbeat was
     * removed as stale): the listing that follows sees it missing and withdraws. EEXIST means a
     * lost reply: ours. A file system that makes no hard links gets the entry created on its own.
     */
    void link(String existing, String entry) {
        try {
            NativeFiles.linkat(fd, existing, fd, entry, 0);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.EEXIST || e.errno() == Errno.ENOENT) {
                return;
            }
            if (e.errno() == Errno.EPERM
                    || e.errno() == Errno.EOPNOTSUPP
                    || e.errno() == Errno.ENOSYS
                    || e.errno() == Errno.EMLINK) {
                create(entry);
                return;
            }
            throw failure("creating " + entry + " (a link to " + existing + ") failed", e);
        }
    }

    /** Unlinks {@code entry}; true if this call removed it, false if it was already gone. */
    boolean remove(String entry) {
        try {
            NativeFiles.unlinkat(fd, entry, 0);
            return true;
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT) {
                return false;
            }
            throw failure("removing " + entry + " failed", e);
        }
    }

    boolean exists(String entry) {
        try {
            return NativeFiles.lstatMode(fd, entry) != -1;
        } catch (ErrnoException e) {
            throw failure("looking up " + entry + " failed", e);
        }
    }

    LockBackendException failure(String what, ErrnoException e) {
        return backend.failure(name, what, e);
    }

    LockLostException lost(String why) {
        return new LockLostException(
                backend.description(),
                name,
                backend.description() + " - " + LockNames.quote(name) + " lost: " + why,
                null);
    }

    @Override
    public void close() {
        if (fd >= 0) {
            try {
                NativeFiles.close(fd);
            } catch (ErrnoException e) {
                // nothing to do
            }
            fd = -1;
        }
    }
}
