package dev.interlock.file.flock;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.internal.LockNames;
import dev.interlock.internal.ProcessIdentity;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LockBackend;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code flock:/dir}: kernel flock(2) locks on files in one directory, for one host.
 *
 * <p><b>Files.</b> Lock name {@code N} is the file {@code DIR/N} for plain names (see
 * {@link NameMapping}), so util-linux {@code flock DIR/N} excludes and is excluded. Each name
 * also has a gate file {@code DIR/.gates/<file name>}. Files are created on first use and never
 * removed: removing a lock file that someone may be locking lets two processes hold "the same"
 * lock on two inodes (seed 004). A lock file removed or replaced by someone else is detected by
 * the lease's periodic check, which then reports the lease lost.
 *
 * <p><b>Acquire, exclusive:</b>
 * <ol>
 *   <li>open {@code DIR/N} (O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC; O_RDONLY if not writable);</li>
 *   <li>flock(LOCK_EX|LOCK_NB); on success go to 5;</li>
 *   <li>busy: take the gate exclusively (flock(LOCK_EX|LOCK_NB) on the gate file) and keep it while
 *       waiting: this keeps new readers out, so a writer is not starved by a stream of readers;</li>
 *   <li>retry flock(LOCK_EX|LOCK_NB) on the lock file each time a waiter is woken;</li>
 *   <li>check the file still has a link (it was not removed between open and flock); read the
 *       counter, write {@code max(counter + 1, now in µs)} as the fencing token plus the holder
 *       record; close the gate if held.</li>
 * </ol>
 * <b>Acquire, shared:</b> take the gate first (LOCK_EX|LOCK_NB), then flock(LOCK_SH|LOCK_NB) on the
 * lock file, update the token and append the record while holding the gate, close the gate.
 * Token updates are therefore serialised: writers by their exclusive lock, readers by the gate.
 * <b>Release:</b> close(2) of the descriptor.
 *
 * <p><b>Waiting.</b> A waiting attempt keeps its descriptors open (so its retries make no inotify
 * noise) and sleeps until inotify reports a close of the lock or gate file, or a bounded poll
 * (default 200ms plus jitter) passes. Timeouts and interrupts are handled in Java; no thread ever
 * blocks inside flock(2).
 *
 * <p><b>Fencing tokens</b> are {@code max(previous + 1, wall-clock microseconds)}: strictly
 * increasing for every acquisition whose holder can write the lock file; holders that cannot
 * write it (read-only file, foreign content) use the clock part alone, which still increases
 * unless the wall clock is stepped back.
 */
final class FlockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(FlockBackend.class);
    static final String GATES = ".gates";
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(Long.getLong("interlock.flock.pollMs", 200));
    private static final int MAX_READ = 1 << 16;
    private static final int MAX_SHARED_RECORDS = 64;

    private final Path dir;
    private final Path gateDir;
    private final String description;
    private final Clock clock;
    private final Inotify inotify;
    /** Nonces of the flock: grants this process holds, in any lock space (records of our own pid are kept only for these). */
    private static final Set<String> liveNonces = ConcurrentHashMap.newKeySet();
    /** Last clock-based token this process issued (any lock space): they stay strictly increasing within the process. */
    private static final AtomicLong lastTimeToken = new AtomicLong();
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private volatile boolean gateDirReady;
    private final byte[] dirPrefix;
    private final byte[] gatePrefix;

    private FlockBackend(Path dir, Clock clock) {
        this.dir = dir;
        this.gateDir = dir.resolve(GATES);
        this.description = "flock:" + dir;
        this.clock = clock;
        this.inotify = new Inotify(description);
        this.dirPrefix = prefix(dir);
        this.gatePrefix = prefix(gateDir);
    }

    private static byte[] prefix(Path p) {
        byte[] b = LibC.path(p);
        b[b.length - 1] = '/';
        return b;
    }

    /** NUL-terminated path of a file name (ASCII by construction) under a directory prefix. */
    private static byte[] under(byte[] prefix, String fileName) {
        byte[] out = new byte[prefix.length + fileName.length() + 1];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        for (int i = 0; i < fileName.length(); i++) {
            out[prefix.length + i] = (byte) fileName.charAt(i);
        }
        return out;
    }

    static FlockBackend open(BackendConfig config) {
        String loc = config.location();
        if (loc.startsWith("//")) {
            if (!loc.startsWith("///")) {
                throw new IllegalArgumentException("flock: URI '" + config.uri() + "' names a host; flock: locks are local: use flock:/path/to/dir");
            }
            loc = loc.substring(2);
        }
        if (loc.isEmpty()) {
            throw new IllegalArgumentException("flock: needs a directory, e.g. flock:/var/lock/myapp (got '" + config.uri() + "')");
        }
        if (loc.indexOf('?') >= 0 || loc.indexOf('#') >= 0) {
            throw new IllegalArgumentException("flock: takes no options (found '?' or '#' in '" + config.uri() + "'); use flock:/path/to/dir");
        }
        Path dir;
        try {
            dir = Path.of(loc).toAbsolutePath().normalize();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("flock: location '" + loc + "' is not a valid path: " + e.getMessage(), e);
        }
        prepareDirectory(dir);
        return new FlockBackend(dir, config.clock());
    }

    /** Creates a missing directory with mode 0700 if its parent allows, and checks it is a writable directory. */
    static void prepareDirectory(Path dir) {
        String desc = "flock:" + dir;
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.exists(dir)) {
            Path parent = dir.getParent();
            if (parent == null || !Files.isDirectory(parent)) {
                throw new LockBackendException(desc, null, desc + " - lock directory " + dir + " does not exist, nor does its parent "
                        + parent + "; create it (mkdir -p -m 700 " + dir + ") or choose another directory", null);
            }
            if (!Files.isWritable(parent)) {
                throw new LockBackendException(desc, null, desc + " - lock directory " + dir + " does not exist and its parent "
                        + parent + " is not writable; create it as a user who can, or choose another directory", null);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                // created concurrently: fine
            } catch (IOException e) {
                throw new LockBackendException(desc, null, desc + " - cannot create lock directory " + dir + ": " + e, e);
            }
        }
        if (!Files.isDirectory(dir)) {
            throw new LockBackendException(desc, null, desc + " - " + dir + " is not a directory; point flock: at a directory", null);
        }
        if (!Files.isWritable(dir) || !Files.isExecutable(dir)) {
            throw new LockBackendException(desc, null, desc + " - lock directory " + dir
                    + " is not writable by this user; fix its permissions or choose another directory", null);
        }
        try {
            java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
            if (perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
                boolean sticky = (((Integer) Files.getAttribute(dir, "unix:mode")) & 01000) != 0;
                log.warn("{} - lock directory {} is writable by every user: anyone can {}; use a directory writable only "
                        + "by the users that share these locks (e.g. chmod 2770 with a common group)", desc, dir,
                        sticky ? "pre-create lock files there to block you or to be refused by fs.protected_regular"
                                : "remove or replace its lock files and so break the exclusion, or pre-create them to block you");
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            // not a POSIX file system: nothing to check
        }
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public boolean leaseBased() {
        return false;
    }

    Path directory() {
        return dir;
    }

    Inotify inotify() {
        return inotify;
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        return new FlockAttempt(spec);
    }

    // ---------------------------------------------------------------------------------- files

    private LockBackendException failure(String name, String what, int errno, boolean transientFailure) {
        return new LockBackendException(description, name, description + " - " + LockNames.quote(name) + ": " + what + ": "
                + LibC.describe(errno) + hint(errno), null, transientFailure);
    }

    private String hint(int errno) {
        switch (errno) {
            case LibC.ENOENT:
                return "; the lock directory " + dir + " was removed: recreate it";
            case LibC.EACCES:
            case LibC.EPERM:
                return "; check the permissions of " + dir;
            case LibC.ELOOP:
                return "; a symbolic link was planted in the lock directory: remove it (Interlock never follows links there)";
            case LibC.EROFS:
                return "; the file system is read-only";
            case LibC.ENOSPC:
                return "; the file system is full";
            default:
                return "";
        }
    }

    /** Opens a lock or gate file; returns fd, negative = read-only fd encoded as ~fd. */
    private int openFile(String name, byte[] path, boolean gate) {
        int fd = LibC.open(path, LibC.O_RDWR | LibC.O_CREAT | LibC.O_NOFOLLOW | LibC.O_CLOEXEC | LibC.O_NOCTTY, 0666);
        if (fd >= 0) {
            return fd;
        }
        int err = LibC.errno();
        if (err == LibC.EACCES || err == LibC.EROFS || err == LibC.EPERM) {
            // flock(2) needs no write access on a local file system: lock it read-only.
            int ro = LibC.open(path, LibC.O_RDONLY | LibC.O_NOFOLLOW | LibC.O_CLOEXEC | LibC.O_NOCTTY, 0);
            if (ro >= 0) {
                if (gate) {
                    return ro;
                }
                warnOnce("ro:" + name, "{} - lock file for '{}' is not writable ({}); holding it read-only, with clock-based fencing tokens",
                        description, name, LibC.describe(err));
                return ~ro;
            }
        }
        if (err == LibC.ENOENT && gate) {
            ensureGateDir(name);
            fd = LibC.open(path, LibC.O_RDWR | LibC.O_CREAT | LibC.O_NOFOLLOW | LibC.O_CLOEXEC | LibC.O_NOCTTY, 0666);
            if (fd >= 0) {
                return fd;
            }
            err = LibC.errno();
        }
        if (err == LibC.EISDIR) {
            throw new LockBackendException(description, name, description + " - " + LockNames.quote(name) + ": "
                    + new String(path, 0, path.length - 1) + " is a directory, not a lock file; remove it or use another name", null);
        }
        throw failure(name, "cannot open " + (gate ? "gate" : "lock") + " file " + new String(path, 0, path.length - 1), err, false);
    }

    private void ensureGateDir(String name) {
        if (gateDirReady) {
            return;
        }
        try {
            try {
                Files.createDirectory(gateDir);
                // Same permissions as the lock directory, so everyone who may lock there may queue there.
                Files.setPosixFilePermissions(gateDir, Files.getPosixFilePermissions(dir));
            } catch (FileAlreadyExistsException e) {
                // made by someone else: fine
            }
            gateDirReady = true;
        } catch (IOException e) {
            throw new LockBackendException(description, name, description + " - cannot create the gate directory " + gateDir + ": " + e, e);
        }
    }

    private void warnOnce(String key, String format, Object... args) {
        if (warned.add(key)) {
            log.warn(format, args);
        }
    }

    private long clockToken() {
        Instant now = clock.instant();
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        return lastTimeToken.accumulateAndGet(micros, (prev, clockNow) -> Math.max(prev + 1, clockNow));
    }

    /** Reads the start of a lock file (all of it up to 64 KiB); lenOut[0] is the length, or -1 on error. */
    private static byte[] readAll(int fd, int[] lenOut) {
        byte[] buf = new byte[512];
        long n = LibC.pread(fd, buf, buf.length, 0);
        if (n == buf.length) {
            buf = new byte[MAX_READ];
            n = LibC.pread(fd, buf, buf.length, 0);
        }
        lenOut[0] = (int) n;
        return buf;
    }

    // ---------------------------------------------------------------------------------- attempt

    final class FlockAttempt implements Attempt {
        private final AcquireSpec spec;
        private final String fileName;
        private final byte[] path;
        private byte[] gatePath;
        private int fd = -1;
        private boolean readOnly;
        private int gfd = -1;
        private boolean gateHeld;
        private Inotify.Waker waker;
        private Inotify.Watch watchLock;
        private Inotify.Watch watchGate;
        private long seen;

        FlockAttempt(AcquireSpec spec) {
            this.spec = spec;
            this.fileName = NameMapping.fileName(spec.name());
            this.path = under(dirPrefix, fileName);
        }

        private byte[] gatePath() {
            if (gatePath == null) {
                gatePath = under(gatePrefix, fileName);
            }
            return gatePath;
        }

        @Override
        public Optional<Grant> tryAcquire() {
            if (waker != null) {
                seen = waker.seq();
            }
            for (int round = 0; round < 3; round++) {
                if (fd < 0) {
                    int r = openFile(spec.name(), path, false);
                    readOnly = r < 0;
                    fd = r < 0 ? ~r : r;
                }
                boolean locked;
                if (spec.mode() == Mode.EXCLUSIVE) {
                    locked = !gateHeld && lockNb(fd, LibC.LOCK_EX);
                    if (!locked) {
                        if (!gateHeld && !takeGate()) {
                            return Optional.empty();
                        }
                        locked = lockNb(fd, LibC.LOCK_EX);
                    }
                } else {
                    if (!gateHeld && !takeGate()) {
                        return Optional.empty();
                    }
                    locked = lockNb(fd, LibC.LOCK_SH);
                }
                if (!locked) {
                    return Optional.empty();
                }
                LibC.FileId id = LibC.fstat(fd);
                if (id == null || id.nlink == 0) {
                    // Removed between our open and our flock: that inode is nobody's lock any more. Start over.
                    LibC.close(fd);
                    fd = -1;
                    continue;
                }
                return Optional.of(finish(id));
            }
            throw new LockBackendException(description, spec.name(), description + " - " + LockNames.quote(spec.name())
                    + ": the lock file keeps being removed while we lock it; stop whatever deletes files in " + dir, null, true);
        }

        private boolean takeGate() {
            if (gfd < 0) {
                gfd = openFile(spec.name(), gatePath(), true);
            }
            gateHeld = lockNb(gfd, LibC.LOCK_EX);
            return gateHeld;
        }

        private boolean lockNb(int fd, int op) {
            while (true) {
                if (LibC.flock(fd, op | LibC.LOCK_NB) == 0) {
                    return true;
                }
                int err = LibC.errno();
                if (err == LibC.EAGAIN) {
                    return false;
                }
                if (err != LibC.EINTR) {
                    throw failure(spec.name(), "flock(2) failed", err, err == LibC.ENOLCK);
                }
            }
        }

        private Grant finish(LibC.FileId id) {
            long token;
            try {
                token = writeTokenAndRecord();
            } catch (RuntimeException e) {
                LibC.close(fd);
                fd = -1;
                closeGate();
                throw e;
            }
            closeGate();
            FlockGrant g = new FlockGrant(spec, fd, token, clock.instant(), id, path);
            fd = -1;
            if (spec.mode() == Mode.SHARED) {
                liveNonces.add(spec.owner().nonce());
            }
            return g;
        }

        private long writeTokenAndRecord() {
            int[] len = new int[1];
            byte[] buf = readAll(fd, len);
            if (len[0] < 0) {
                throw failure(spec.name(), "cannot read lock file", LibC.errno(), true);
            }
            boolean hashed = NameMapping.isHashed(fileName);
            long now = clock.millis();
            if (spec.mode() == Mode.EXCLUSIVE && !hashed && !readOnly) {
                long stored = LockFileContent.quickToken(buf, len[0]);
                if (stored >= 0) {
                    long token = Math.max(stored + 1, clockToken());
                    byte[] out = LockFileContent.renderOne(token, new LockFileContent.Record(Mode.EXCLUSIVE, token, spec.owner().id(), now));
                    writeContent(out, len[0]);
                    return token;
                }
            }
            LockFileContent content = LockFileContent.parse(buf, len[0]);
            if (hashed && content.storedName.isPresent() && !content.storedName.get().equals(spec.name())) {
                throw new LockBackendException(description, spec.name(), description + " - " + LockNames.quote(spec.name())
                        + " maps to " + fileName + ", which belongs to " + LockNames.quote(content.storedName.get())
                        + " (SHA-256 collision); use a shorter name", null);
            }
            if (readOnly || content.kind == LockFileContent.Kind.FOREIGN) {
                if (content.kind == LockFileContent.Kind.FOREIGN) {
                    warnOnce("foreign:" + fileName, "{} - lock file {} holds content not written by Interlock; leaving it untouched "
                            + "(fencing tokens for '{}' are clock-based, holder details are not recorded)", description, dir.resolve(fileName), spec.name());
                }
                return clockToken();
            }
            if (content.kind == LockFileContent.Kind.DAMAGED) {
                warnOnce("damaged:" + fileName, "{} - lock file {} was damaged (bad header); rewriting it", description, dir.resolve(fileName));
            }
            long token = Math.max(content.token + 1, clockToken());
            LockFileContent.Record mine = new LockFileContent.Record(spec.mode(), token, spec.owner().id(), now);
            List<LockFileContent.Record> records;
            if (spec.mode() == Mode.EXCLUSIVE) {
                records = List.of(mine);
            } else {
                records = new ArrayList<>();
                for (LockFileContent.Record r : content.records) {
                    if (r.mode() == Mode.SHARED && plausiblyHeld(r)) {
                        records.add(r);
                    }
                }
                while (records.size() >= MAX_SHARED_RECORDS) {
                    records.remove(0);
                }
                records.add(mine);
            }
            writeContent(LockFileContent.render(token, hashed ? Optional.of(spec.name()) : Optional.empty(), records), len[0]);
            return token;
        }

        private void writeContent(byte[] out, int oldLength) {
            long w = LibC.pwrite(fd, out, out.length, 0);
            if (w != out.length) {
                throw failure(spec.name(), "cannot write the fencing token to the lock file", w < 0 ? LibC.errno() : LibC.ENOSPC, false);
            }
            if (oldLength > out.length && LibC.ftruncate(fd, out.length) != 0) {
                throw failure(spec.name(), "cannot truncate the lock file", LibC.errno(), false);
            }
        }

        private void closeGate() {
            if (gfd >= 0) {
                LibC.close(gfd);
                gfd = -1;
            }
            gateHeld = false;
        }

        @Override
        public void await(long nanos) throws InterruptedException {
            if (waker == null) {
                waker = new Inotify.Waker();
                seen = waker.seq();
                watch();
                return; // watches are active now: let the caller try again before sleeping
            }
            if ((watchLock == null || watchLock.dead) || (watchGate == null || watchGate.dead)) {
                unwatch();
                watch();
            }
            long jitter = ThreadLocalRandom.current().nextLong(POLL_NANOS / 4 + 1);
            waker.awaitChange(seen, Math.min(nanos, POLL_NANOS + jitter));
        }

        private void watch() {
            watchLock = inotify.add(path, waker);
            watchGate = inotify.add(gatePath(), waker);
        }

        private void unwatch() {
            if (watchLock != null) {
                inotify.remove(watchLock, waker);
                watchLock = null;
            }
            if (watchGate != null) {
                inotify.remove(watchGate, waker);
                watchGate = null;
            }
        }

        @Override
        public List<HolderInfo> blockers() {
            try {
                return inspect(spec.name()).holders();
            } catch (RuntimeException e) {
                return List.of();
            }
        }

        @Override
        public void close() {
            if (waker != null) {
                unwatch();
            }
            if (fd >= 0) {
                LibC.close(fd);
                fd = -1;
            }
            closeGate();
        }
    }

    /** A shared record is kept while its process lives (and, for this process, while its lease is open). */
    private boolean plausiblyHeld(LockFileContent.Record r) {
        Owner o;
        try {
            o = Owner.parse(r.ownerId());
        } catch (IllegalArgumentException e) {
            return false;
        }
        ProcessIdentity me = ProcessIdentity.current();
        if (o.pid() == me.pid() && o.processStart() == me.startTicks() && o.host().equals(me.host())) {
            return liveNonces.contains(o.nonce());
        }
        OptionalLong start = ProcessIdentity.startTicks(o.pid());
        return start.isPresent() && (o.processStart() < 0 || start.getAsLong() == o.processStart());
    }

    // ---------------------------------------------------------------------------------- grant

    final class FlockGrant implements Grant {
        private final AcquireSpec spec;
        private final long token;
        private final Instant acquiredAt;
        private final LibC.FileId id;
        private final byte[] path;
        private int fd;

        FlockGrant(AcquireSpec spec, int fd, long token, Instant acquiredAt, LibC.FileId id, byte[] path) {
            this.spec = spec;
            this.fd = fd;
            this.token = token;
            this.acquiredAt = acquiredAt;
            this.id = id;
            this.path = path;
        }

        @Override
        public long token() {
            return token;
        }

        @Override
        public Instant acquiredAt() {
            return acquiredAt;
        }

        @Override
        public synchronized void renew(Duration lease) {
            if (fd < 0) {
                throw new LockLostException(description, spec.name(), description + " - " + LockNames.quote(spec.name()) + " was released", null);
            }
            LibC.FileId now = LibC.lstat(path);
            if (now == null) {
                int err = LibC.errno();
                if (err == LibC.ENOENT) {
                    throw new LockLostException(description, spec.name(), description + " - the lock file of "
                            + LockNames.quote(spec.name()) + " was removed while held; another process may now lock a new file of that name", null);
                }
                throw failure(spec.name(), "cannot check the lock file", err, true);
            }
            if (!now.sameFile(id)) {
                throw new LockLostException(description, spec.name(), description + " - the lock file of "
                        + LockNames.quote(spec.name()) + " was replaced by another file while held", null);
            }
        }

        @Override
        public synchronized void release() {
            if (fd >= 0) {
                LibC.close(fd);
                fd = -1;
                liveNonces.remove(spec.owner().nonce());
            }
        }

        @Override
        public synchronized OptionalInt inheritableDescriptor() {
            return fd >= 0 ? OptionalInt.of(fd) : OptionalInt.empty();
        }
    }

    // ---------------------------------------------------------------------------------- status

    @Override
    public LockInfo inspect(String name) {
        return inspectFile(name, NameMapping.fileName(name));
    }

    private LockInfo inspectFile(String name, String fileName) {
        byte[] p = LibC.path(dir.resolve(fileName));
        LibC.FileId id = LibC.lstat(p);
        if (id == null || !id.isRegularFile()) {
            return new LockInfo(name, List.of(), 0);
        }
        List<ProcLocks.Entry> kernel = ProcLocks.flocksOn(id.devMajor, id.devMinor, id.ino);
        LockFileContent content = readContent(p);
        List<LockFileContent.Record> unused = new ArrayList<>(content == null ? List.of() : content.records);
        unused.sort(Comparator.comparingLong(LockFileContent.Record::token).reversed());
        List<HolderInfo> holders = new ArrayList<>();
        int waiters = 0;
        for (ProcLocks.Entry e : kernel) {
            if (e.waiting()) {
                waiters++;
                continue;
            }
            LockFileContent.Record match = null;
            for (LockFileContent.Record r : unused) {
                if (r.mode() == e.mode() && pidOf(r.ownerId()) == e.pid()) {
                    match = r;
                    break;
                }
            }
            if (match != null) {
                unused.remove(match);
                Owner o = Owner.parse(match.ownerId());
                holders.add(new HolderInfo(e.mode(), Optional.of(o.id()), Optional.of(o.host()), e.pid(),
                        Optional.of(Instant.ofEpochMilli(match.sinceMillis())), Optional.empty(), OptionalLong.of(match.token())));
            } else {
                holders.add(new HolderInfo(e.mode(), Optional.empty(), Optional.of(ProcessIdentity.current().host()), e.pid(),
                        Optional.empty(), Optional.empty(), OptionalLong.empty()));
            }
        }
        holders.sort(Comparator.comparing(HolderInfo::mode).reversed());
        return new LockInfo(name, holders, waiters);
    }

    private static long pidOf(String ownerId) {
        try {
            return Owner.parse(ownerId).pid();
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    private static LockFileContent readContent(byte[] p) {
        int fd = LibC.open(p, LibC.O_RDONLY | LibC.O_NOFOLLOW | LibC.O_CLOEXEC | LibC.O_NOCTTY | LibC.O_NONBLOCK, 0);
        if (fd < 0) {
            return null;
        }
        try {
            int[] len = new int[1];
            byte[] buf = readAll(fd, len);
            return len[0] < 0 ? null : LockFileContent.parse(buf, len[0]);
        } finally {
            LibC.close(fd);
        }
    }

    @Override
    public List<LockInfo> list() {
        List<LockInfo> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String f = p.getFileName().toString();
                Optional<String> name = NameMapping.nameOf(f);
                if (name.isEmpty() && NameMapping.isHashed(f)) {
                    LockFileContent c = readContent(LibC.path(p));
                    name = c == null ? Optional.empty() : c.storedName;
                }
                if (name.isPresent() && NameMapping.fileName(name.get()).equals(f)) {
                    out.add(inspectFile(name.get(), f));
                }
            }
        } catch (IOException e) {
            throw new LockBackendException(description, null, description + " - cannot list " + dir + ": " + e, e);
        }
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        LockInfo info = inspect(name);
        throw new UnsupportedOperationException(description + " - " + LockNames.quote(name)
                + " is a kernel lock: it frees when its holder exits and cannot be broken; "
                + (info.isFree() ? "it is free now" : "held " + info.holders().get(0).describe()
                + (info.holders().size() > 1 ? " and " + (info.holders().size() - 1) + " more" : "")));
    }

    @Override
    public void close() {
        inotify.close();
    }
}
