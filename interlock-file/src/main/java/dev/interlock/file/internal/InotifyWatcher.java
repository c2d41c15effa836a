package dev.interlock.file.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Internal API of Interlock (not for applications; may change in any release): the one inotify
 * instance of the process and the one thread that reads it, shared by every {@code flock:} and
 * {@code dir:} lock space, to tell waiting attempts that a file or directory they wait on changed.
 *
 * <p><b>One for the process.</b> The kernel allows 128 inotify instances per user by default
 * ({@code fs.inotify.max_user_instances}), counted across all of that user's processes; one per
 * lock space ran out in a process with many spaces, and their waiters fell back to polling.
 *
 * <p><b>Lifetime.</b> Started at the first {@link #watch}, then kept for the life of the JVM as a
 * daemon thread blocked in read(2) on the inotify descriptor (an idle thread and one descriptor,
 * no CPU). Stopping it when the last watch goes would mean a new thread and descriptor for every
 * wait of a process that waits now and then, and a stop racing with the next start; keeping it
 * means nothing ever has to wait for it, so closing a lock space or a watch never blocks.
 *
 * <p><b>Watches</b> are taken through the descriptor their user already holds
 * ({@code /proc/self/fd/N}, which the kernel resolves to the open file itself), never by a path
 * that someone could meanwhile replace. inotify has one watch descriptor per inode and per
 * instance, and a new {@code inotify_add_watch} on an inode replaces its event mask; so each watch
 * adds its events with {@code IN_MASK_ADD} (the kernel's mask is the union of every user's), the
 * users of an inode are counted, the inode is unwatched when its last user goes, and events are
 * passed on only to the users that asked for them. The kernel mask is not narrowed while other
 * users remain (it would need a path to the inode): they only see the events they asked for.
 *
 * <p><b>Delivery.</b> An event wakes the {@link Waker} of every watch of its inode that asked for
 * it; a queue overflow ({@code IN_Q_OVERFLOW}, events were lost) wakes every watch; a watch whose
 * inode the kernel dropped ({@code IN_IGNORED}: the file was deleted, its file system unmounted)
 * is woken and {@linkplain Watch#isDead() dead}, and its user watches again or polls. Waiters must
 * still poll, boundedly, for what inotify cannot see (another host on NFS, an {@code flock -u}
 * that keeps the file open).
 */
public final class InotifyWatcher {
    private static final Logger log = LoggerFactory.getLogger(InotifyWatcher.class);
    private static final InotifyWatcher PROCESS = new InotifyWatcher();
    /** Room for 512 events without names, or about 30 with the longest names. */
    private static final int BUFFER = 8192;

    /** The watcher of this process. */
    public static InotifyWatcher process() {
        return PROCESS;
    }

    /** One watched inode and the watches on it. */
    private static final class Inode {
        final int wd;
        final Set<Watch> watches = ConcurrentHashMap.newKeySet();
        volatile boolean dead;

        Inode(int wd) {
            this.wd = wd;
        }
    }

    /** One user's watch of one inode. */
    public static final class Watch implements AutoCloseable {
        private final InotifyWatcher watcher;
        private final Inode inode;
        private final int events;
        private final Waker waker;
        private boolean closed; // guarded by watcher.lock

        private Watch(InotifyWatcher watcher, Inode inode, int events, Waker waker) {
            this.watcher = watcher;
            this.inode = inode;
            this.events = events;
            this.waker = waker;
        }

        /** True once the kernel dropped the inode's watch (deleted, unmounted): watch again, or poll. */
        public boolean isDead() {
            return inode.dead;
        }

        /** Stops this watch; the inode stays watched while others watch it. Idempotent, never blocks for long. */
        @Override
        public void close() {
            watcher.remove(this);
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    /** Read without the lock by the reader thread; changed under the lock. */
    private final ConcurrentHashMap<Integer, Inode> byWd = new ConcurrentHashMap<>();
    /** The inotify descriptor; -1 before the start and after a failure. Guarded by lock. */
    private int ifd = -1;
    private boolean started;
    private volatile boolean failed;

    private InotifyWatcher() {}

    /**
     * Watches the file or directory open as {@code fd} for {@code mask} (IN_* events, plus
     * {@code IN_ONLYDIR} if wanted) on behalf of {@code waker}.
     *
     * @return the watch, or null if inotify is unavailable or cannot watch this file (the caller then polls)
     */
    public Watch watch(int fd, int mask, Waker waker) {
        int events = mask & LibcEvents.IN_ALL_EVENTS;
        // No IN_DONT_FOLLOW: /proc/self/fd/N is a link that must be followed to reach the open file.
        int flags = mask & LibcEvents.IN_ONLYDIR;
        byte[] path = LibcFiles.cstring("/proc/self/fd/" + fd);
        lock.lock();
        try {
            if (!start()) {
                return null;
            }
            int wd = LibcEvents.inotify_add_watch(ifd, path, events | flags | LibcEvents.IN_MASK_ADD);
            if (wd < 0) {
                log.debug("cannot watch descriptor {} with inotify: {}; its waiter polls", fd, Errno.describeLast());
                return null;
            }
            Inode inode = byWd.get(wd);
            if (inode == null || inode.dead) {
                inode = new Inode(wd);
                byWd.put(wd, inode);
            }
            Watch w = new Watch(this, inode, events, waker);
            inode.watches.add(w);
            return w;
        } finally {
            lock.unlock();
        }
    }

    private void remove(Watch w) {
        lock.lock();
        try {
            if (w.closed) {
                return;
            }
            w.closed = true;
            Inode inode = w.inode;
            inode.watches.remove(w);
            if (inode.watches.isEmpty() && byWd.get(inode.wd) == inode) {
                byWd.remove(inode.wd);
                if (!inode.dead && ifd >= 0) {
                    LibcEvents.inotify_rm_watch(ifd, inode.wd); // EINVAL if the kernel dropped it meanwhile: nothing to do
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Number of inodes watched now; for tests. */
    public int watchedInodes() {
        return byWd.size();
    }

    /** Makes the inotify instance and starts the reader thread, once; false if inotify is unavailable. Called with lock held. */
    private boolean start() {
        if (started) {
            return !failed;
        }
        started = true;
        try {
            ifd = LibcEvents.inotify_init1(LibcEvents.IN_CLOEXEC);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            log.warn("inotify is unavailable ({}); waiters poll instead", e.getMessage());
            failed = true;
            return false;
        }
        if (ifd < 0) {
            int err = Errno.last();
            log.warn("inotify is unavailable ({}{}); waiters poll instead", Errno.describe(err),
                    err == Errno.EMFILE ? ": this user has used up fs.inotify.max_user_instances" : "");
            failed = true;
            return false;
        }
        Thread t = new Thread(this::run, "interlock-inotify");
        t.setDaemon(true);
        t.start();
        return true;
    }

    private void run() {
        byte[] buf = new byte[BUFFER];
        int fd = ifd;
        try {
            while (true) {
                long n = LibcFiles.read(fd, buf, buf.length);
                if (n < 0) {
                    int err = Errno.last();
                    if (err == Errno.EINTR || err == Errno.EAGAIN) {
                        continue;
                    }
                    throw new ErrnoException(err);
                }
                dispatch(buf, (int) n);
            }
        } catch (RuntimeException | Error e) {
            log.error("the inotify thread failed; waiters fall back to polling", e);
            List<Inode> all;
            lock.lock();
            try {
                failed = true;
                all = new ArrayList<>(byWd.values());
                for (Inode inode : all) {
                    inode.dead = true;
                }
                byWd.clear();
                LibcFiles.close(ifd);
                ifd = -1;
            } finally {
                lock.unlock();
            }
            wake(all);
        }
    }

    private void dispatch(byte[] buf, int len) {
        for (int off = 0; off + 16 <= len; ) {
            // struct inotify_event: int wd, u32 mask, u32 cookie, u32 len, char name[len]
            int wd = LibcFiles.getInt(buf, off);
            int mask = LibcFiles.getInt(buf, off + 4);
            off += 16 + LibcFiles.getInt(buf, off + 12);
            if ((mask & LibcEvents.IN_Q_OVERFLOW) != 0) {
                log.debug("inotify queue overflow: waking every waiter");
                wakeAll();
                continue;
            }
            Inode inode = byWd.get(wd);
            if (inode == null) {
                continue; // a watch removed meanwhile
            }
            if ((mask & LibcEvents.IN_IGNORED) != 0) {
                lock.lock();
                try {
                    inode.dead = true;
                    byWd.remove(wd, inode);
                } finally {
                    lock.unlock();
                }
                for (Watch w : inode.watches) {
                    w.waker.wake();
                }
                continue;
            }
            for (Watch w : inode.watches) {
                if ((w.events & mask) != 0 || (mask & LibcEvents.IN_UNMOUNT) != 0) {
                    w.waker.wake();
                }
            }
        }
    }

    private void wakeAll() {
        wake(new ArrayList<>(byWd.values()));
    }

    private static void wake(List<Inode> inodes) {
        for (Inode inode : inodes) {
            for (Watch w : inode.watches) {
                w.waker.wake();
            }
        }
    }
}
