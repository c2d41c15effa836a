package dev.interlock.file.flock;

import dev.interlock.Capability;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Owner;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.FileSpaceUri;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.KernelWait;
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
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.ProcessIdentity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntToLongFunction;

/**
 * {@code flock:/dir}: kernel flock(2) locks on files in one directory, for one host.
 *
 * <p><b>Files.</b> Lock name {@code N} is the file {@code DIR/N} for plain names (see
 * {@link NameMapping}), so util-linux {@code flock DIR/N} excludes and is excluded. Each name
 * also has a gate file {@code DIR/.gates/<file name>}. Files are created on first use and never
 * removed: removing a lock file that someone may be locking lets two processes hold "the same"
 * lock on two inodes (the flaw of lock files cleaned up after use). A lock file removed or replaced by someone else is detected by
 * the lease's periodic check, which then reports the lease lost. It compares two identities: the
 * directory the space's path leads to must still be the directory we hold (not renamed away or
 * replaced), and the name, looked up in the held directory, must still be the inode we locked.
 *
 * <p><b>No link is followed.</b> The lock directory is opened once (O_DIRECTORY; the path the
 * user gave may be a link they chose) and every other file is opened relative to a descriptor
 * with O_NOFOLLOW: {@code .gates} by openat(dirfd), lock files by openat(dirfd), gate files by
 * openat(gatesfd); waiters watch the files they hold open through {@code /proc/self/fd}. A link
 * planted anywhere in the space therefore leads nowhere: it is refused with a message. A
 * {@code .gates} that is not a directory, or that belongs to another user when every user may
 * write the lock directory, makes the space refuse to lock (see {@link #openGates}).
 *
 * <p><b>Nothing is created by reading.</b> A missing lock directory (whose parent exists and is
 * writable) is made, mode 0700, with its {@code .gates}, at the first acquisition; status and list
 * of a missing directory fail with "no lock space at DIR (nothing was created)".
 *
 * <p><b>Network file systems are refused</b> (NFS, SMB, Ceph, FUSE...; see
 * {@link NetworkFileSystems}) unless the URI says {@code ?network=allow}: a lock there may
 * exclude across hosts, but status, wake-ups and fencing tokens would be per host.
 *
 * <p><b>Acquire, exclusive:</b>
 * <ol>
 *   <li>open {@code N} relative to the lock directory (O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC; O_RDONLY if not writable);</li>
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
 * <p><b>Waiting.</b> A waiting attempt keeps its descriptors open and, on a platform thread,
 * sleeps in flock(2) itself ({@link KernelWait}): the waiter that holds the gate on the lock
 * file, the others on the gate, so a release wakes one waiter inside the kernel. A timer signal
 * aimed at the thread ends the sleep for a timeout, an interrupt or the space closing; each sleep
 * is also bounded (default 200ms plus jitter), after which the attempt tries again from the top
 * (a lock file replaced meanwhile is found then). Virtual threads, and JVMs where the signal is
 * not set up as expected, sleep until inotify (the process's one {@link InotifyWatcher}, shared
 * by every lock space, read by the first waiting thread itself) reports a close of the same file,
 * or the bounded poll passes. Timeouts and interrupts are exact on both paths.
 *
 * <p><b>Semaphores</b> ({@code limit(n)}): a permit is a kernel lock on one of N slot files in
 * {@code .gates} plus the lock file held shared; see {@link FlockSemaphore}.
 *
 * <p><b>Fencing tokens</b> are {@code max(previous + 1, wall-clock microseconds)}: strictly
 * increasing for every acquisition whose holder can write the lock file; holders that cannot
 * write it (read-only file, foreign content) use the clock part alone, which still increases
 * unless the wall clock is stepped back.
 */
final class FlockBackend implements LockBackend {
    private static final Log log = Log.of(FlockBackend.class);
    static final String GATES = ".gates";
    static final byte[] GATES_BYTES = LibcFiles.cstring(GATES);
    private static final byte[] DOT = LibcFiles.cstring(".");
    /**
     * The mean bound of one sleep of a waiter (drawn from [p/2, 3p/2] by the backends' one law, {@code Backoff}):
     * 225ms by default, the mean of the [200ms, 250ms] that flock: drew before it shared the law.
     */
    static final Duration POLL = Duration.ofMillis(Long.getLong("interlock.flock.pollMs", 200) * 9 / 8);

    static final int MAX_SHARED_RECORDS = 64;
    static final int DIR_FLAGS = LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC;
    /** A release is a close(2) of the holder's descriptor; a removed or replaced file must wake its waiters too. */
    static final int WATCH_MASK = LibcEvents.IN_CLOSE_WRITE
            | LibcEvents.IN_CLOSE_NOWRITE
            | LibcEvents.IN_DELETE_SELF
            | LibcEvents.IN_MOVE_SELF
            | LibcEvents.IN_ATTRIB;

    final Path dir;
    /** What status and list read: the kernel's locks and the lock files' records. */
    private final FlockStatus status = new FlockStatus(this);
    /** The lock directory's path: opened, created and checked by the rules both file backends share. */
    private final LockSpaceDirectory space;

    private static final String MKDIR = "mkdir -p -m 700";
    final byte[] dirPath;
    final Path gateDir;
    final String description;
    /** The backend's exceptions, in the one form "flock:/path - 'name': what". */
    final BackendFailures failures;

    final Clock clock;
    /** Wakers of this space's waiting attempts: closing the space wakes them, so that they see it closed. */
    final Set<Waker> waiting = ConcurrentHashMap.newKeySet();
    /** Watches this space's attempts hold now; for tests. */
    final AtomicInteger watches = new AtomicInteger();

    final boolean networkAllowed;
    /** Set when the lock directory was found on a network file system (allowed): see {@link FlockQueue}. */
    volatile boolean onNetworkFileSystem;

    private final IntToLongFunction fileSystemType;
    /** Nonces of the flock: grants this process holds, in any lock space (records of our own pid are kept only for these). */
    static final Set<String> liveNonces = ConcurrentHashMap.newKeySet();
    /** Last clock-based token this process issued (any lock space): they stay strictly increasing within the process. */
    private static final AtomicLong lastTimeToken = new AtomicLong();

    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /**
     * Guards the two directory descriptors: every use holds the read lock (uses never block), and
     * close() takes the write lock, so a descriptor is never used after it was closed (its number
     * could by then name another directory).
     */
    private final ReentrantReadWriteLock fdLock = new ReentrantReadWriteLock();

    private final Object openLock = new Object();
    /** The lock directory, opened once (the user's path, links included); -1 until it exists. Guarded by openLock for writes. */
    volatile int dirFd = -1;
    /** {@code .gates}, opened relative to dirFd without following links; -1 until the first acquisition. */
    volatile int gatesFd = -1;
    /** Mode and owner of the lock directory, read when dirFd was opened. */
    int dirMode;

    int dirOwner;
    private boolean closed;

    private FlockBackend(Path dir, Clock clock, boolean networkAllowed, IntToLongFunction fileSystemType) {
        this.dir = dir;
        this.dirPath = LibcFiles.path(dir);
        this.gateDir = dir.resolve(GATES);
        this.description = "flock:" + dir;
        this.failures = new BackendFailures(description);
        this.space = new LockSpaceDirectory(dir, "flock:", failures);
        this.clock = clock;
        this.networkAllowed = networkAllowed;
        this.fileSystemType = fileSystemType;
    }

    static FlockBackend open(BackendConfig config) {
        return open(
                config,
                new IntToLongFunction() { // a class, not a lambda: see DefaultLockSpace.Threads
                    @Override
                    public long applyAsLong(int fd) {
                        return LibcFiles.fileSystemType(fd);
                    }
                });
    }

    /**
     * Opens the space. {@code fileSystemType} tells the statfs(2) {@code f_type} of a directory
     * descriptor; tests replace it to see the refusal of network file systems on a local disk.
     */
    static FlockBackend open(BackendConfig config, IntToLongFunction fileSystemType) {
        FileSpaceUri uri = FileSpaceUri.parse(config, "flock:/path/to/dir", Set.of("network"));
        boolean networkAllowed = false;
        String network = uri.options().get("network");
        if (network != null) {
            if (!network.equals("allow") && !network.equals("refuse")) {
                throw new IllegalArgumentException(
                        "'" + config.maskedUri() + "': network takes allow or refuse, not '" + network + "'");
            }
            networkAllowed = network.equals("allow");
        }
        FlockBackend b = new FlockBackend(uri.directory(), config.clock(), networkAllowed, fileSystemType);
        b.openExisting();
        return b;
    }

    // ---------------------------------------------------------------------------------- directory

    /**
     * At open: opens an existing lock directory and checks it; a missing one is left missing (it is
     * made at the first acquisition), but a missing one that could never be made is an error now.
     */
    private void openExisting() {
        int fd = space.openIfExists(false);
        if (fd >= 0) {
            adopt(fd, false);
            return;
        }
        space.requireParent(MKDIR);
        Path parent = dir.getParent();
        if (!Files.isWritable(parent)) {
            throw failures.refused(
                    null,
                    "lock directory " + dir + " does not exist and its parent " + parent
                            + " is not writable; create it as a user who can, or choose another directory",
                    null);
        }
        int pfd = LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.path(parent), DIR_FLAGS, 0);
        if (pfd >= 0) {
            try {
                checkFileSystem(pfd, parent);
            } finally {
                LibcFiles.close(pfd);
            }
        }
    }

    /** Checks a freshly opened lock directory descriptor and makes it the space's; closes it if refused. */
    private void adopt(int fd, boolean createdByUs) {
        try {
            LibcFiles.Statx st;
            try {
                st = NativeFiles.fstat(fd);
            } catch (ErrnoException e) {
                throw failure(null, "cannot check the lock directory " + dir, e.errno(), false);
            }
            checkFileSystem(fd, dir);
            if (LibcFiles.faccessat(fd, DOT, LibcFiles.W_OK | LibcFiles.X_OK, 0) != 0) {
                throw failures.refused(
                        null,
                        "lock directory " + dir
                                + " is not writable by this user; fix its permissions or choose another directory",
                        null);
            }
            if (createdByUs && st.uid() != LibcFiles.geteuid()) {
                throw failures.refused(
                        null,
                        "the lock directory " + dir
                                + " this process just made was replaced by one of uid " + st.uid()
                                + "; someone who can write "
                                + dir.getParent()
                                + " is interfering: choose a directory only you (or your group) can write",
                        null);
            }
            space.warnIfWritableByEveryone(
                    log,
                    st.mode(),
                    description,
                    (st.mode() & 01000) != 0
                            ? "pre-create lock files there to block you or to be refused by fs.protected_regular"
                            : "remove or replace its lock files and so break the exclusion, or pre-create them to block you");
            dirMode = st.mode() & 07777;
            dirOwner = st.uid();
        } catch (RuntimeException e) {
            LibcFiles.close(fd);
            throw e;
        }
        dirFd = fd;
    }

    /** Refuses a network or cluster file system unless the URI allowed it (see {@link NetworkFileSystems}). */
    private void checkFileSystem(int fd, Path where) {
        long type = fileSystemType.applyAsLong(fd);
        if (type == -1) {
            return; // fstatfs failed: nothing known, nothing refused
        }
        Optional<String> network = NetworkFileSystems.name(type);
        if (network.isEmpty()) {
            return;
        }
        onNetworkFileSystem = true;
        if (!networkAllowed) {
            throw failures.refused(
                    null,
                    where + " is on " + network.get()
                            + String.format(
                                    " (file system type 0x%X), a network file system: flock(2) there may exclude across hosts, but",
                                    type)
                            + " status, waiting and fencing tokens would be wrong on every other host (status says 'free' while another"
                            + " host holds a lock); use dir:" + dir
                            + " to share locks between hosts, a local directory for one host,"
                            + " or flock:" + dir + "?network=allow if you accept those limits",
                    null);
        }
        if (warned.add("network")) {
            log.info(
                    "{} - {} is on {}, allowed by network=allow: a lock excludes across hosts only if the server supports flock(2);"
                            + " status, waiter wake-ups and fencing tokens are per host",
                    description,
                    where,
                    network.get());
        }
    }

    /** The lock directory for reading (status, list); never creates anything. */
    int readingDirFd() {
        int fd = dirFd;
        if (fd >= 0) {
            return fd;
        }
        synchronized (openLock) {
            if (dirFd < 0) {
                adopt(space.openForReading(), false);
            }
            return dirFd;
        }
    }

    /** The lock directory for locking: made (mode 0700) at the first acquisition, with its {@code .gates}. */
    int lockingDirFd() {
        int fd = dirFd;
        if (fd >= 0 && gatesFd >= 0) {
            return fd;
        }
        synchronized (openLock) {
            if (dirFd < 0) {
                boolean created = space.create(0700, MKDIR);
                // What we just made is opened without following a link: whoever can write the parent cannot swap one
                // in.
                int f = space.openIfExists(created);
                if (f < 0) {
                    throw failures.unreachable(
                            null, "the lock directory " + dir + " was removed as soon as it was made", null);
                }
                adopt(f, created);
            }
            if (gatesFd < 0) {
                gatesFd = FlockGates.open(this, dirFd);
            }
            return dirFd;
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

    /**
     * The locked descriptor can be inherited, waiters are counted (from {@code /proc/locks}), and a
     * name may be held as a semaphore ({@link FlockSemaphore}). No break (a kernel lock frees only
     * when its holder releases it or exits), and tokens are not strict: a holder that cannot write
     * the lock file takes a clock-based token.
     */
    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.INHERITABLE_DESCRIPTOR, Capability.WAITER_COUNT, Capability.SEMAPHORE);
    }

    Path directory() {
        return dir;
    }

    /** Number of inotify watches this space's waiting attempts hold now (two per waiting attempt: lock and gate file); for tests. */
    int watchCount() {
        return watches.get();
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        return new FlockAttempt(this, spec);
    }

    /** Takes the read side of fdLock; fails if the space is closed. */
    void enter() {
        fdLock.readLock().lock();
        if (closed) {
            fdLock.readLock().unlock();
            throw new IllegalStateException(description + " - the lock space is closed");
        }
    }

    void leave() {
        fdLock.readLock().unlock();
    }

    // ---------------------------------------------------------------------------------- files

    LockBackendException failure(String name, String what, int errno, boolean transientFailure) {
        String why = what + ": " + Errno.describe(errno) + hint(errno);
        return transientFailure ? failures.unreachable(name, why, null) : failures.refused(name, why, null);
    }

    private String hint(int errno) {
        switch (errno) {
            case Errno.ENOENT:
                return "; the lock directory " + dir
                        + " was removed while in use: recreate it and open the lock space again";
            case Errno.EACCES:
            case Errno.EPERM:
                return "; check the permissions of " + dir;
            case Errno.ELOOP:
                return "; a symbolic link was planted in the lock directory: remove it (Interlock never follows links there)";
            case Errno.EROFS:
                return "; the file system is read-only";
            case Errno.ENOSPC:
                return "; the file system is full";
            default:
                return "";
        }
    }

    void warnOnce(String key, String format, Object... args) {
        if (warned.add(key)) {
            log.warn(format, args);
        }
    }

    long clockToken() {
        Instant now = clock.instant();
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        while (true) { // accumulateAndGet without a lambda to link at every command's start
            long prev = lastTimeToken.get();
            long next = Math.max(prev + 1, micros);
            if (lastTimeToken.compareAndSet(prev, next)) {
                return next;
            }
        }
    }

    // ---------------------------------------------------------------------------------- attempt

    /** A shared record is kept while its process lives (and, for this process, while its lease is open). */
    boolean plausiblyHeld(LockFileContent.Record r) {
        Owner o;
        try {
            o = Owner.parse(r.ownerId());
        } catch (IllegalArgumentException e) {
            return false;
        }
        ProcessIdentity me = ProcessIdentity.current();
        if (o.pid() == me.pid()
                && o.processStart() == me.startTicks()
                && o.host().equals(me.host())) {
            return liveNonces.contains(o.nonce());
        }
        OptionalLong start = ProcessIdentity.startTicks(o.pid());
        return start.isPresent() && (o.processStart() < 0 || start.getAsLong() == o.processStart());
    }

    // ---------------------------------------------------------------------------------- grant

    // ---------------------------------------------------------------------------------- status

    /**
     * {@inheritDoc}
     *
     * @throws LockBackendException "no lock space at DIR (nothing was created)" if the lock
     *     directory does not exist: reading never creates it
     */
    @Override
    public LockInfo inspect(String name) {
        return status.inspect(name);
    }

    /**
     * {@inheritDoc}
     *
     * @throws LockBackendException "no lock space at DIR (nothing was created)" if the lock
     *     directory does not exist: reading never creates it
     */
    @Override
    public List<LockInfo> list() {
        return status.list();
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        LockInfo info = inspect(name);
        throw new UnsupportedOperationException(description + " - " + LockNames.quote(name)
                + " is a kernel lock: it frees when its holder exits and cannot be broken; "
                + (info.isFree()
                        ? "it is free now"
                        : "held " + info.holders().get(0).describe()
                                + (info.holders().size() > 1
                                        ? " and " + (info.holders().size() - 1) + " more"
                                        : "")));
    }

    @Override
    public void close() {
        fdLock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (gatesFd >= 0) {
                LibcFiles.close(gatesFd);
                gatesFd = -1;
            }
            if (dirFd >= 0) {
                LibcFiles.close(dirFd);
                dirFd = -1;
            }
        } finally {
            fdLock.writeLock().unlock();
        }
        for (Waker w : waiting) {
            w.wake(); // waiting attempts try again, and find the space closed
        }
    }
}
