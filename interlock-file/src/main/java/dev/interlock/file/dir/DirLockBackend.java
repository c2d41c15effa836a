package dev.interlock.file.dir;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Ticker;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.Ids;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.LibcEvents;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.LockSpaceDirectory;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.file.internal.Waker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Barging;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The {@code dir:} backend: NFS-safe lock files in a directory shared by many hosts, with no
 * daemon. The protocol is specified in docs/dir-protocol.md; in short:
 * <ol>
 *   <li>each lock name has a directory, created once, atomically (a prepared temporary directory
 *       renamed into place) and never removed;</li>
 *   <li>it holds exactly one gate file whose name carries the last fencing token; every state
 *       change is a rename of the exact gate name that was seen, so it succeeds for exactly one
 *       contender and never undoes a change it did not see;</li>
 *   <li>a writer renames the gate to its own {@code X.} name and is granted once no reader entry
 *       remains; a reader renames the gate to a new {@code F.} name (taking a token), publishes
 *       its entry and heartbeat, then checks that no writer came in between;</li>
 *   <li>holders renew by renaming their heartbeat; others judge a holder dead at once on the
 *       same host and pid namespace (pid plus start time), otherwise only after seeing the same
 *       name unrenewed for a whole lease on their own monotonic clock.</li>
 * </ol>
 * Thread-safe.
 */
final class DirLockBackend implements LockBackend {
    private static final Log log = Log.of(DirLockBackend.class);
    static final String NAME_RECORD = "name";
    static final String MARKER = ".interlock-dir";
    static final String MARKER_TEXT = "interlock-dir " + DirEntries.FORMAT + "\n";
    /** Any entry created, removed or renamed in a lock directory, or the directory itself moved or removed. */
    private static final int WATCH_MASK = LibcEvents.IN_CREATE
            | LibcEvents.IN_DELETE
            | LibcEvents.IN_MOVED_FROM
            | LibcEvents.IN_MOVED_TO
            | LibcEvents.IN_DELETE_SELF
            | LibcEvents.IN_MOVE_SELF
            | LibcEvents.IN_ONLYDIR;

    final String description;
    /** The root's path: opened, created and checked by the rules both file backends share. */
    private final LockSpaceDirectory space;
    /** Status, list and break: reading the lock directories, and breaking by owner. */
    private final DirStatus status = new DirStatus(this);

    private static final String MKDIR = "mkdir -p";
    /** The backend's exceptions, in the one form "dir:/path - 'name': what". */
    final BackendFailures failures;

    final Path root;
    /**
     * The root directory as last opened, or null before its first use. Opening a lock space
     * creates nothing: the first acquisition creates the root and its marker. If the path comes to
     * name another directory (moved or replaced), the next operation opens the new one; the old
     * descriptor stays open (in {@link #retired}) for the grants made in it, which notice the
     * move at their next renewal, and is closed with the space.
     */
    private volatile Root rootDir;

    private final List<Root> retired = new ArrayList<>();
    final Ticker ticker;
    final Clock clock;
    final long pollNanos;
    final DirSelf self;
    private final Set<String> warnedForeign = ConcurrentHashMap.newKeySet();
    private final Set<String> verifiedHashed = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** What this process has observed of other holders: entry key -> (exact name, first seen on the ticker). */
    private final ConcurrentHashMap<String, Seen> seen = new ConcurrentHashMap<>();

    private record Seen(String state, long since) {}

    /** One opening of the root directory: its descriptor and the identity of what it names. */
    static final class Root {
        final int fd;
        final LibcFiles.Statx id;
        /** True once the marker is there (made or checked) and the permissions were looked at: the root may be written. */
        volatile boolean prepared;
        /** True once an existing marker was read and found right. */
        volatile boolean markerChecked;
        /** Tells the holders in this root of moves at once; made by the first grant, closed with the space. */
        private DirMoves moves;

        Root(int fd, LibcFiles.Statx id) {
            this.fd = fd;
            this.id = id;
        }

        synchronized DirMoves moves(DirLockBackend backend) {
            if (moves == null) {
                moves = new DirMoves(backend, this);
            }
            return moves;
        }

        synchronized void close() {
            if (moves != null) {
                moves.close();
            }
            try {
                NativeFiles.close(fd);
            } catch (ErrnoException e) {
                // nothing to do
            }
        }
    }

    DirLockBackend(BackendConfig config, Path root, long pollNanos, int bargeLimit) {
        NativeFiles.requireAvailable("dir:");
        this.description = "dir:" + root;
        this.failures = new BackendFailures(description);
        this.space = new LockSpaceDirectory(root, "dir:", failures);
        this.root = root;
        this.ticker = config.ticker();
        this.clock = config.clock();
        this.pollNanos = pollNanos;
        this.barging = new Barging(bargeLimit);
        this.self = DirSelf.current();
        // An existing directory is opened (and a marker in it checked) at once, so that a wrong
        // directory is refused early; a missing one is created by the first acquisition only.
        try {
            rootDir = openRoot();
            if (rootDir != null) {
                checkMarker(rootDir, false);
            } else {
                space.requireParent(MKDIR); // a root that could never be made is refused now, as flock: does
            }
        } catch (RuntimeException e) {
            closeRoots();
            throw e;
        }
        if (!self.procUsable) {
            log.info(
                    "{} - /proc does not describe this process's pid namespace; dead holders on this host are found by their lease only",
                    description);
        }
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public boolean leaseBased() {
        return true;
    }

    /** Break by owner, strict tokens (carried in the gate's name), a counted and ordered queue, permits (DirPermits). */
    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(
                Capability.BREAK,
                Capability.STRICT_FENCING,
                Capability.WAITER_COUNT,
                Capability.QUEUE,
                Capability.SEMAPHORE);
    }

    /**
     * Checks the format marker, so that two incompatible versions never share a directory, and
     * creates it if {@code create}. Without {@code create}, a missing marker is fine: a directory
     * nothing was ever locked in (it is read as an empty lock space).
     */
    private void checkMarker(Root r, boolean create) {
        int rootFd = r.fd;
        for (int i = 0; i < 3; i++) {
            try {
                byte[] b = NativeFiles.readFile(rootFd, MARKER, 256);
                String text = new String(b, StandardCharsets.UTF_8);
                if (text.equals(MARKER_TEXT)) {
                    r.markerChecked = true;
                    return;
                }
                if (text.startsWith("interlock-dir ") && text.endsWith("\n")) {
                    throw failures.refused(
                            null,
                            "the directory uses format '" + text.trim() + "', this version speaks '"
                                    + MARKER_TEXT.trim() + "'; use a matching Interlock version or another directory",
                            null);
                }
                throw failures.refused(
                        null,
                        MARKER + " is not an Interlock format marker (" + b.length
                                + " bytes); is this the right directory?",
                        null);
            } catch (ErrnoException e) {
                if (e.errno() == Errno.EACCES) {
                    throw unreadable(null, rootFd, MARKER, root.resolve(MARKER));
                }
                if (e.errno() != Errno.ENOENT) {
                    throw failure(null, "reading " + MARKER + " failed", e);
                }
            }
            if (!create) {
                return;
            }
            // Publish the marker complete: write a temporary file, then link it to the fixed name.
            String tmp = MARKER + "." + nonce();
            try {
                int f = NativeFiles.openat(rootFd, tmp, LibcFiles.O_CREATE_NEW_NO_FOLLOW, 0444);
                try {
                    NativeFiles.fchmod(f, readableLike(r.id.mode()));
                    NativeFiles.writeFully(f, MARKER_TEXT.getBytes(StandardCharsets.UTF_8));
                } finally {
                    NativeFiles.close(f);
                }
                try {
                    NativeFiles.linkat(rootFd, tmp, rootFd, MARKER, 0);
                } catch (ErrnoException e) {
                    if (e.errno() != Errno.EEXIST) {
                        throw e;
                    }
                }
            } catch (ErrnoException e) {
                if (e.errno() == Errno.EROFS) {
                    throw failure(
                            null, "the lock directory is on a read-only file system and has no " + MARKER + " yet", e);
                }
                throw failure(null, "creating " + MARKER + " failed", e);
            } finally {
                try {
                    NativeFiles.unlinkat(rootFd, tmp, 0);
                } catch (ErrnoException ignored) {
                    // not created
                }
            }
        }
        throw failures.refused(null, MARKER + " keeps disappearing", null);
    }

    /** Opens the root as its path names it now (following a symlink the user chose); null if it does not exist. */
    private Root openRoot() {
        int fd = space.openIfExists(false);
        if (fd < 0) {
            return null;
        }
        try {
            return new Root(fd, NativeFiles.fstat(fd));
        } catch (ErrnoException e) {
            NativeFiles.close(fd);
            throw failure(null, "cannot read the identity of the lock directory", e);
        }
    }

    /** The identity of what the root path names now (following links), or null if nothing. */
    LibcFiles.Statx rootIdentityNow() {
        return space.identityNow();
    }

    /**
     * The root to work in now: the directory the path names at this moment. With {@code create}
     * (an acquisition) the root and its marker are created if missing, with the checks of
     * {@link #checkMarker}; without it (status, list, break) nothing is ever created and a
     * missing root is an error that says so.
     */
    Root root(boolean create) {
        checkOpen();
        Root r = rootDir;
        LibcFiles.Statx now = rootIdentityNow();
        if (r != null && now != null && r.id.sameFile(now) && (r.prepared || !create && r.markerChecked)) {
            return r;
        }
        synchronized (this) {
            checkOpen();
            r = rootDir;
            if (now == null) {
                if (!create) {
                    throw space.noLockSpace();
                }
                space.create(0777, MKDIR); // never its parents: see LockSpaceDirectory
                now = rootIdentityNow();
            }
            if (r == null || now == null || !r.id.sameFile(now)) {
                Root fresh = openRoot();
                if (fresh == null) {
                    if (!create) {
                        throw space.noLockSpace();
                    }
                    throw failures.unreachable(
                            null,
                            "the lock directory " + root + " keeps disappearing (is something deleting it?)",
                            null);
                }
                if (r != null) {
                    log.warn(
                            "{} - the lock directory {} is not the directory this lock space opened (it was moved or replaced); "
                                    + "using the one there now. Locks held in the old one are lost at their next renewal",
                            description,
                            root);
                    retired.add(r);
                }
                rootDir = r = fresh;
            }
            if (create && !r.prepared) {
                checkMarker(r, true);
                space.warnIfWritableByEveryone(
                        log, r.id.mode(), description, "take, break or block these locks (and plant files)");
                r.prepared = true;
            } else if (!create && !r.markerChecked) {
                checkMarker(r, false);
            }
            return r;
        }
    }

    /**
     * The observed-lease rule: returns why the entry {@code key} is stale, or null. It is stale
     * once this process has seen exactly the same {@code state} (the entry's full name, which
     * changes with every renewal) for at least {@code leaseMs} on its own monotonic ticker. No
     * wall clock is read, so clock steps on any host change nothing.
     */
    String stale(String key, String state, long leaseMs, long now) {
        Seen s = seen.get(key);
        if (s == null || !s.state().equals(state)) {
            if (seen.size() > 100_000) {
                seen.clear(); // forgetting only delays a judgement
            }
            seen.put(key, new Seen(state, now));
            return null;
        }
        long unchanged = now - s.since();
        if (unchanged >= TimeUnit.MILLISECONDS.toNanos(leaseMs)) {
            seen.remove(key, s);
            return "not renewed for " + TimeUnit.NANOSECONDS.toMillis(unchanged) + "ms, its lease is " + leaseMs + "ms";
        }
        return null;
    }

    static String nonce() {
        return String.format("%016x", ThreadLocalRandom.current().nextLong());
    }

    /**
     * Opens the directory of {@code name}, creating it if {@code create}; empty if it does not
     * exist and {@code create} is false.
     */
    Optional<DirLockDir> openLockDir(String name, boolean create) {
        return openLockDir(root(create), name, create);
    }

    Optional<DirLockDir> openLockDir(Root r, String name, boolean create) {
        String dirName = DirNames.encode(name);
        for (int i = 0; i < 5; i++) {
            try {
                int fd = NativeFiles.openat(
                        r.fd,
                        dirName,
                        LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC,
                        0);
                LibcFiles.Statx id;
                try {
                    id = NativeFiles.fstat(fd);
                } catch (ErrnoException e) {
                    NativeFiles.close(fd);
                    throw failure(name, "reading the identity of the lock directory " + dirName + " failed", e);
                }
                DirLockDir d = new DirLockDir(this, r, name, dirName, fd, id);
                if (DirNames.isHashed(dirName) && !verifiedHashed.contains(dirName)) {
                    verifyNameRecord(d, fd);
                }
                return Optional.of(d);
            } catch (ErrnoException e) {
                if (e.errno() == Errno.ELOOP || e.errno() == Errno.ENOTDIR) {
                    throw failures.refused(
                            name,
                            dirName
                                    + " is a symbolic link or a file, not a lock directory; it was not made by Interlock (remove it)",
                            e);
                }
                if (e.errno() != Errno.ENOENT) {
                    throw failure(name, "opening the lock directory " + dirName + " failed", e);
                }
                if (!create) {
                    return Optional.empty();
                }
            }
            DirCreation.createLockDir(this, r.fd, name, dirName);
        }
        throw failures.unreachable(
                name, "the lock directory " + dirName + " keeps disappearing (is something deleting it?)", null);
    }

    private void verifyNameRecord(DirLockDir d, int fd) {
        String recorded;
        try {
            recorded = parseNameRecord(NativeFiles.readFile(fd, NAME_RECORD, 16 * 1024))
                    .orElse(null);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.EACCES) {
                d.close();
                throw unreadable(
                        d.name, fd, NAME_RECORD, root.resolve(d.dirName).resolve(NAME_RECORD));
            }
            recorded = null;
        }
        if (!d.name.equals(recorded)) {
            d.close();
            throw failures.refused(
                    d.name,
                    "the name record of " + d.dirName
                            + " is missing, damaged or names another lock; refusing to use it",
                    null);
        }
        verifiedHashed.add(d.dirName);
    }

    static Optional<String> parseNameRecord(byte[] data) {
        String text = new String(data, StandardCharsets.UTF_8);
        String prefix = "interlock-dir " + DirEntries.FORMAT + "\nname ";
        if (!text.startsWith(prefix) || !text.endsWith("\n")) {
            return Optional.empty();
        }
        return DirNames.recordUnescape(text.substring(prefix.length(), text.length() - 1));
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        return new DirAttempt(this, openLockDir(spec.name(), true).orElseThrow(), spec);
    }

    /**
     * Watches a lock directory for {@code waker}, through the descriptor the attempt holds (the
     * process's one {@link InotifyWatcher}); null if it cannot be watched (the waiter then polls).
     */
    InotifyWatcher.Watch watch(DirLockDir dir, Waker waker) {
        return closed ? null : InotifyWatcher.process().watch(dir.fd(), WATCH_MASK, waker);
    }

    /** Lock directories whose last permit granted here saw no waiter and no other permit: a hint only (DirPermits). */
    final Set<String> quietPermits = ConcurrentHashMap.newKeySet();

    /** The last gate name this process saw or made for a lock directory: a hint only, never trusted. */
    private final ConcurrentHashMap<String, String> gateHints = new ConcurrentHashMap<>();

    void hint(String dirName, String gate) {
        if (gateHints.size() > 100_000) {
            gateHints.clear();
        }
        gateHints.put(dirName, gate);
    }

    /** The hinted gate if it is a free ({@code F}) gate, else null. */
    Gate hintedFreeGate(String dirName) {
        String h = gateHints.get(dirName);
        if (h == null || h.charAt(0) != 'F') {
            return null;
        }
        return Gate.parse(h).orElse(null);
    }

    /**
     * Bounded barging, per lock directory: the mark a release leaves is the free gate's name
     * (docs/dir-protocol.md, 4.6); whether the gate is really still the one we left is decided by
     * the rename that takes it.
     */
    final Barging barging;

    @Override
    public LockInfo inspect(String name) {
        return status.inspect(name);
    }

    /** Who holds the lock of a listing: its writer (from the gate), then its readers by token. */
    static List<HolderInfo> holders(DirLockDir.Snapshot s) {
        return DirStatus.holders(s);
    }

    @Override
    public List<LockInfo> list() {
        return status.list();
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        return status.breakLock(name, ownerId);
    }

    void reportForeign(String name, String dirName, List<String> foreign) {
        if (warnedForeign.add(dirName + "/" + foreign)) {
            log.warn(
                    "{} - {} contains entries Interlock did not make; they are ignored: {}",
                    description,
                    name == null ? "the lock directory" : LockNames.quote(name) + " (" + dirName + ")",
                    foreign);
        }
    }

    /**
     * The read bits of the root's mode: what the files Interlock reads back (the marker, name
     * records) get through their descriptor, whatever the creator's umask, so that every user who
     * may read the root may read them (no write bit: they are never written after their creation).
     */
    static int readableLike(int rootMode) {
        return rootMode & 0444;
    }

    /** A file of the space that this user cannot read (made by an older version under a restrictive umask): named, with what to do. */
    private LockBackendException unreadable(String name, int dirfd, String entry, Path file) {
        String how = "";
        try {
            LibcFiles.Statx st = LibcFiles.lstatAt(dirfd, LibcFiles.cstring(entry.getBytes(StandardCharsets.UTF_8)));
            if (st != null) {
                how = " (mode " + String.format("%04o", st.mode() & 07777) + ", owner " + Ids.user(st.uid()) + ")";
            }
        } catch (RuntimeException ignored) {
            // the name is enough
        }
        return failures.refused(
                name,
                "cannot read " + file + how
                        + ": permission denied; every user of these locks must be able to read it (it was"
                        + " made under a restrictive umask by an older version?): chmod a+r " + file,
                null);
    }

    LockBackendException failure(String name, String what, ErrnoException e) {
        String hint;
        switch (e.errno()) {
            case Errno.EROFS:
                hint = " (read-only file system)";
                break;
            case Errno.ENOSPC:
                hint = " (no space left on the file system)";
                break;
            case Errno.EACCES:
            case Errno.EPERM:
                hint = " (permission denied: every user of these locks needs write access to " + root + ")";
                break;
            default:
                hint = "";
        }
        String why = what + ": " + e.getMessage() + hint;
        boolean transientFailure = e.errno() != Errno.EROFS && e.errno() != Errno.EACCES && e.errno() != Errno.EPERM;
        return transientFailure ? failures.unreachable(name, why, e) : failures.refused(name, why, e);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(description + " - the backend is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeRoots();
    }

    private synchronized void closeRoots() {
        List<Root> all = new ArrayList<>(retired);
        if (rootDir != null) {
            all.add(rootDir);
        }
        retired.clear();
        for (Root r : all) {
            r.close();
        }
    }
}
