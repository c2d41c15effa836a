package dev.interlock.file.internal;

import dev.interlock.spi.support.Log;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Internal API of Interlock (not for applications; may change in any release): tells holders, at
 * once, that a directory their lock lives in, or an entry of it, was renamed away or removed on
 * this host. A {@code dir:} lock held in a directory that someone renames is no longer the lock
 * others take by that name; the renewal finds it, but only a third of a lease later (10 s with the
 * default lease, during which two holders run). inotify sees the rename when it happens.
 *
 * <p><b>Why not {@link InotifyWatcher}.</b> That one is read only by threads that wait for a lock,
 * so that an event wakes the waiter itself (one hop); a holder waits for nothing, and a watch of
 * its own there would need a thread that leads forever, making every waiter of the process a
 * follower (two hops). So holders have this second inotify instance of the process, read by one
 * daemon thread that blocks in read(2) and calls the listeners; it is started by the first watch
 * and lives as long as the process (a thread and a descriptor, costing nothing while nothing
 * moves).
 *
 * <p><b>What is watched.</b> A directory, through the descriptor its user holds ({@code
 * /proc/self/fd/N}), for an entry renamed away ({@code IN_MOVED_FROM}) or removed ({@code
 * IN_DELETE}), and for the directory itself renamed ({@code IN_MOVE_SELF}) or removed. Watch the
 * parent of what you hold, not the thing itself: the kernel reports the removal of a directory
 * that a descriptor keeps open ({@code IN_DELETE_SELF}) only when the last descriptor closes, but
 * the parent hears of it at once. Events on other hosts (NFS) are never seen: holders still learn
 * of those at their renewal.
 *
 * <p>Listeners are called on the watcher's thread: they must be quick and must not block.
 */
public final class EntryWatcher {
    private static final Log log = Log.of(EntryWatcher.class);
    private static final EntryWatcher PROCESS = new EntryWatcher();
    private static final int MASK = LibcEvents.IN_MOVED_FROM
            | LibcEvents.IN_DELETE
            | LibcEvents.IN_MOVE_SELF
            | LibcEvents.IN_DELETE_SELF
            | LibcEvents.IN_ONLYDIR;
    private static final int BUFFER = 8192;

    /** The watcher of this process. */
    public static EntryWatcher process() {
        return PROCESS;
    }

    /** What a watched directory's user hears. */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param mask the inotify event ({@link LibcEvents#IN_MOVED_FROM}, {@link LibcEvents#IN_DELETE},
         *     {@link LibcEvents#IN_MOVE_SELF}, {@link LibcEvents#IN_DELETE_SELF}, or {@link
         *     LibcEvents#IN_Q_OVERFLOW} when events were lost)
         * @param name the entry it is about, or null if it is about the directory itself
         */
        void changed(int mask, String name);
    }

    /** One listener's watch; closing it ends the kernel's watch when it was the last on its directory. */
    public final class Registration implements AutoCloseable {
        private final int wd;
        private final Listener listener;
        private boolean closed; // guarded by lock

        private Registration(int wd, Listener listener) {
            this.wd = wd;
            this.listener = listener;
        }

        @Override
        public void close() {
            remove(this);
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    /** Watch descriptor -> its listeners; read without the lock by the reading thread. */
    private final ConcurrentHashMap<Integer, Set<Registration>> byWd = new ConcurrentHashMap<>();
    /** The inotify descriptor, -1 before the start; guarded by lock. */
    private int ifd = -1;

    private boolean started;
    private volatile boolean failed;

    private EntryWatcher() {}

    /**
     * Watches the directory open as {@code dirFd} for {@code listener}.
     *
     * @return the registration, or null if inotify cannot watch it here (the holder then learns of
     *     a move at its renewal only)
     */
    public Registration watch(int dirFd, Listener listener) {
        byte[] path = LibcFiles.cstring("/proc/self/fd/" + dirFd);
        lock.lock();
        try {
            if (!start()) {
                return null;
            }
            // One watch descriptor per inode: a second user of the same directory gets the same one.
            int wd = LibcEvents.inotify_add_watch(ifd, path, MASK);
            if (wd < 0) {
                log.debug(
                        "cannot watch descriptor {} for moves: {}; a move is found at the next renewal",
                        dirFd,
                        Errno.describeLast());
                return null;
            }
            Registration r = new Registration(wd, listener);
            byWd.computeIfAbsent(wd, k -> ConcurrentHashMap.newKeySet()).add(r);
            return r;
        } finally {
            lock.unlock();
        }
    }

    private void remove(Registration r) {
        lock.lock();
        try {
            if (r.closed) {
                return;
            }
            r.closed = true;
            Set<Registration> users = byWd.get(r.wd);
            if (users != null && users.remove(r) && users.isEmpty()) {
                byWd.remove(r.wd);
                if (ifd >= 0) {
                    LibcEvents.inotify_rm_watch(ifd, r.wd); // EINVAL if the kernel dropped it already: nothing to do
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** The inotify instances this watcher has open (0 or 1, for the whole process); for tests. */
    public int instances() {
        lock.lock();
        try {
            return ifd >= 0 && !failed ? 1 : 0;
        } finally {
            lock.unlock();
        }
    }

    /** Number of directories watched now; for tests. */
    public int watchedDirectories() {
        return byWd.size();
    }

    /** Makes the inotify instance and starts its reading thread, once; false if inotify is unavailable. Called with lock held. */
    private boolean start() {
        if (started) {
            return !failed;
        }
        started = true;
        try {
            ifd = LibcEvents.inotify_init1(LibcEvents.IN_CLOEXEC);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            log.debug(
                    "inotify is unavailable ({}); moved lock directories are found at the next renewal",
                    e.getMessage());
            failed = true;
            return false;
        }
        if (ifd < 0) {
            log.info(
                    "inotify is unavailable ({}); moved lock directories are found at the next renewal",
                    Errno.describeLast());
            failed = true;
            return false;
        }
        int fd = ifd;
        Thread t = new Thread(() -> read(fd), "interlock-entry-watcher");
        t.setDaemon(true);
        t.start();
        return true;
    }

    /** The reading thread: blocks in read(2) for as long as the process lives. */
    private void read(int fd) {
        byte[] buf = new byte[BUFFER];
        while (true) {
            long n = LibcFiles.read(fd, buf, buf.length);
            if (n < 0) {
                int err = Errno.last();
                if (err == Errno.EINTR) {
                    continue;
                }
                log.error(
                        "reading inotify for moved lock directories failed ({}); moves are found at the next renewal from now on",
                        Errno.describe(err));
                failed = true;
                return;
            }
            dispatch(buf, (int) n);
        }
    }

    private void dispatch(byte[] buf, int len) {
        for (int off = 0; off + 16 <= len; ) {
            // struct inotify_event: int wd, u32 mask, u32 cookie, u32 len, char name[len]
            int wd = LibcFiles.getInt(buf, off);
            int mask = LibcFiles.getInt(buf, off + 4);
            int padded = LibcFiles.getInt(buf, off + 12);
            int nameLen = 0;
            while (nameLen < padded && buf[off + 16 + nameLen] != 0) {
                nameLen++;
            }
            String name = nameLen == 0 ? null : new String(buf, off + 16, nameLen, StandardCharsets.UTF_8);
            off += 16 + padded;
            if ((mask & LibcEvents.IN_Q_OVERFLOW) != 0) {
                log.debug("inotify queue overflow: some moves may be found only at the next renewal");
                continue;
            }
            if ((mask & LibcEvents.IN_IGNORED) != 0) {
                // The kernel dropped the watch (directory gone, file system unmounted): its users keep
                // their registrations, which now hear nothing; the renewal still checks.
                byWd.remove(wd);
                continue;
            }
            Set<Registration> users = byWd.get(wd);
            if (users == null) {
                continue; // removed meanwhile
            }
            for (Registration r : users) {
                try {
                    r.listener.changed(mask & LibcEvents.IN_ALL_EVENTS, name);
                } catch (RuntimeException e) {
                    log.error("a listener for moved lock directories failed", e);
                }
            }
        }
    }
}
