package dev.interlock.file.internal;

import dev.interlock.spi.support.Log;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.spi.AbstractInterruptibleChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Internal API of Interlock (not for applications; may change in any release): the one inotify
 * instance of the process, shared by every {@code flock:} and {@code dir:} lock space, to tell
 * waiting attempts that a file or directory they wait on changed.
 *
 * <p><b>One for the process.</b> The kernel allows 128 inotify instances per user by default
 * ({@code fs.inotify.max_user_instances}), counted across all of that user's processes; one per
 * lock space ran out in a process with many spaces, and their waiters fell back to polling.
 *
 * <p><b>Read by the waiters themselves.</b> There is no reader thread. The first thread of the
 * process that waits becomes the <i>leader</i>: it blocks in poll(2) on the inotify descriptor
 * and an eventfd, so the kernel's event wakes the waiting thread itself, one hop from the
 * release to the retry (a reader thread that then woke the waiter took two, and the second cost
 * more than the first: measured 23 µs from the release to the reader, 45 µs more to the waiter).
 * Other waiting threads are <i>followers</i>: they sleep on their {@link Waker}, which the leader
 * moves on when it reads their events. A leader whose own event came, or whose time is up, stops
 * leading and asks the longest waiting follower to lead in its place. Interrupts stay exact: the
 * leader's poll is registered with the JDK's interrupt machinery (an {@link
 * AbstractInterruptibleChannel} whose close writes the eventfd), and a wake-up of the leader's own
 * waker from another thread (a lock space closing) writes it too. Threads: none of our own;
 * descriptors: two for the process, however many wait. A virtual thread that leads pins its
 * carrier while it polls (one carrier for the process).
 *
 * <p>With nobody waiting nobody reads, and events stay queued in the kernel until the next
 * leader reads them (and passes them on, as spurious wake-ups where nobody waits for them).
 * Watches live only while their attempts wait, so the queue stays short.
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
 * it, in the kernel's order; a queue overflow ({@code IN_Q_OVERFLOW}, events were lost) wakes every watch; a watch whose
 * inode the kernel dropped ({@code IN_IGNORED}: the file was deleted, its file system unmounted)
 * is woken and {@linkplain Watch#isDead() dead}, and its user watches again or polls. Waiters must
 * still poll, boundedly, for what inotify cannot see (another host on NFS, an {@code flock -u}
 * that keeps the file open).
 */
public final class InotifyWatcher {
    private static final Log log = Log.of(InotifyWatcher.class);
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
        /** No watch left, kernel watch not removed yet (see {@link #flushIdle()}). Guarded by lock. */
        boolean idle;

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
        private volatile NameFilter filter;
        private boolean closed; // guarded by watcher.lock

        private Watch(InotifyWatcher watcher, Inode inode, int events, Waker waker) {
            this.watcher = watcher;
            this.inode = inode;
            this.events = events;
            this.waker = waker;
        }

        /**
         * From now on, wakes only for the named events {@code f} wants (null: every event asked
         * for). Events read before this call were passed on under the previous filter: narrow it
         * only after a look at the directory that began after the filter was last widened.
         */
        public void filter(NameFilter f) {
            filter = f;
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
    /** Read without the lock by the leader; changed under the lock. */
    private final ConcurrentHashMap<Integer, Inode> byWd = new ConcurrentHashMap<>();
    /** The inotify descriptor (non-blocking); -1 before the start and after a failure. Guarded by lock. */
    private int ifd = -1;
    /** The eventfd that ends the leader's poll(2) early (an interrupt, a wake-up of its own waker). */
    private volatile int efd = -1;

    private boolean started;
    private volatile boolean failed;
    /** Inodes without watches whose kernel watch is still to be removed. Guarded by lock. */
    private final List<Inode> idle = new ArrayList<>();

    private volatile int idleCount;
    /** The waker whose thread reads inotify now, or null. Guarded by lock. */
    private Waker leader;
    /** The other waiting threads' wakers, longest waiting first. Guarded by lock. */
    private final LinkedHashSet<Waker> followers = new LinkedHashSet<>();
    /** The leader's buffers: only the leader touches them. */
    private final byte[] events = new byte[BUFFER];

    private final byte[] pollFds = new byte[16];
    private final byte[] counter = new byte[8];
    private static final byte[] ONE = {1, 0, 0, 0, 0, 0, 0, 0};
    /** How many times a leader found its own wake-up in what it read; for tests. */
    private final AtomicLong ownWakeups = new AtomicLong();
    /** How many times leading passed from one thread to another; for tests. */
    private final AtomicLong promotions = new AtomicLong();

    private InotifyWatcher() {}

    /**
     * Watches the file or directory open as {@code fd} for {@code mask} (IN_* events, plus
     * {@code IN_ONLYDIR} if wanted) on behalf of {@code waker}, whose {@linkplain Waker#awaitChange
     * waits} go through this watcher from now on.
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
            } else if (inode.idle) {
                inode.idle = false; // watched again before its removal: keep the kernel's watch
                idle.remove(inode);
            }
            removeIdle();
            Watch w = new Watch(this, inode, events, waker);
            inode.watches.add(w);
            waker.watched = true;
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
                if (inode.dead || ifd < 0) {
                    byWd.remove(inode.wd);
                } else if (!inode.idle) {
                    // The kernel's watch goes later (flushIdle): the last watch of an inode ends when
                    // its waiter got the lock, and inotify_rm_watch there delayed every hand-off.
                    inode.idle = true;
                    idle.add(inode);
                    idleCount = idle.size();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes the kernel's watches of the inodes nobody watches any more. Called after a release
     * (the release's event is out, so this costs the next holder nothing), at the next watch and
     * when a thread starts reading; cheap when there is nothing to remove.
     */
    public void flushIdle() {
        if (idleCount == 0) {
            return;
        }
        lock.lock();
        try {
            removeIdle();
        } finally {
            lock.unlock();
        }
    }

    /** Called with lock held. */
    private void removeIdle() {
        for (Inode inode : idle) {
            inode.idle = false;
            if (inode.watches.isEmpty() && byWd.get(inode.wd) == inode) {
                byWd.remove(inode.wd);
                if (!inode.dead && ifd >= 0) {
                    LibcEvents.inotify_rm_watch(
                            ifd, inode.wd); // EINVAL if the kernel dropped it meanwhile: nothing to do
                }
            }
        }
        idle.clear();
        idleCount = 0;
    }

    /** Number of inodes whose kernel watch waits for {@link #flushIdle()}; for tests. */
    public int idleInodes() {
        lock.lock();
        try {
            return idle.size();
        } finally {
            lock.unlock();
        }
    }

    /** Number of inodes watched now (not counting those only waiting for {@link #flushIdle()}); for tests. */
    public int watchedInodes() {
        lock.lock();
        try {
            return byWd.size() - idle.size();
        } finally {
            lock.unlock();
        }
    }

    /** How many times a reading thread found its own wake-up among the events it read (one hop); for tests. */
    public long ownWakeups() {
        return ownWakeups.get();
    }

    /** How many times reading passed from a thread that stopped waiting to another waiting thread; for tests. */
    public long promotions() {
        return promotions.get();
    }

    /** True while some thread reads inotify; for tests. */
    public boolean hasLeader() {
        lock.lock();
        try {
            return leader != null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes the inotify instance and the eventfd, once; false if inotify is unavailable. Called
     * with lock held.
     */
    private boolean start() {
        if (started) {
            return !failed;
        }
        started = true;
        try {
            ifd = LibcEvents.inotify_init1(LibcEvents.IN_CLOEXEC | LibcEvents.IN_NONBLOCK);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            log.warn("inotify is unavailable ({}); waiters poll instead", e.getMessage());
            failed = true;
            return false;
        }
        if (ifd < 0) {
            int err = Errno.last();
            log.warn(
                    "inotify is unavailable ({}{}); waiters poll instead",
                    Errno.describe(err),
                    err == Errno.EMFILE ? ": this user has used up fs.inotify.max_user_instances" : "");
            failed = true;
            return false;
        }
        efd = LibcEvents.eventfd(0, LibcEvents.EFD_CLOEXEC | LibcEvents.EFD_NONBLOCK);
        if (efd < 0) {
            log.warn("eventfd(2) failed ({}); waiters poll instead", Errno.describeLast());
            LibcFiles.close(ifd);
            ifd = -1;
            failed = true;
            return false;
        }
        return true;
    }

    /**
     * Waits for {@code waker} to move on from {@code seen}, at most {@code nanos}. The first
     * waiting thread of the process leads: it blocks in poll(2) on the inotify descriptor itself,
     * so the kernel's event wakes it directly, and passes on what it reads that is not its own.
     * The others sleep on their waker until their event is passed on, or until they are asked to
     * lead because the leader stopped waiting.
     */
    boolean await(Waker waker, long seen, long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 4);
        while (true) {
            if (waker.seq() != seen) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            boolean lead;
            boolean gone;
            lock.lock();
            try {
                gone = failed;
                if (gone) {
                    lead = false;
                } else {
                    lead = leader == null;
                    if (lead) {
                        leader = waker;
                        waker.leading = true;
                        removeIdle();
                    } else {
                        followers.add(waker);
                    }
                }
            } finally {
                lock.unlock();
            }
            if (gone) {
                return waker.awaitLocally(seen, left, false)
                        == Waker.CHANGED; // nobody reads inotify any more: the caller polls
            }
            if (lead) {
                try {
                    return lead(waker, seen, deadline);
                } finally {
                    resign(waker);
                }
            }
            int r;
            try {
                r = waker.awaitLocally(seen, left, true);
            } finally {
                lock.lock();
                try {
                    followers.remove(waker);
                } finally {
                    lock.unlock();
                }
            }
            if (r != Waker.PROMOTED) {
                return r == Waker.CHANGED;
            }
        }
    }

    /** Stops leading, and asks the longest waiting follower to lead in its place. */
    private void resign(Waker waker) {
        lock.lock();
        try {
            waker.leading = false;
            if (leader == waker) {
                leader = null;
                Iterator<Waker> it = followers.iterator();
                if (it.hasNext()) {
                    Waker next = it.next();
                    it.remove(); // promoted once; it comes back as leader or follower
                    promotions.incrementAndGet();
                    next.promote();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** The leader's loop: poll(2), read and pass on events, until its own waker moved or the time is up. */
    private boolean lead(Waker waker, long seen, long deadline) throws InterruptedException {
        // Closed only by an interrupt of this thread, which ends the lead: one serves the whole loop.
        PollInterruptor interruptor = new PollInterruptor(this);
        while (true) {
            if (waker.seq() != seen) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            int ms = (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
            putPollFd(0, ifd);
            putPollFd(8, efd);
            int n;
            boolean completed = false;
            interruptor.enter();
            try {
                n = LibcEvents.poll(pollFds, 2, ms);
                completed = true;
            } finally {
                try {
                    interruptor.exit(completed);
                } catch (ClosedByInterruptException e) {
                    Thread.interrupted(); // InterruptedException clears it, as the caller expects
                    LibcFiles.read(efd, counter, 8);
                    throw new InterruptedException("interrupted while waiting for a lock");
                } catch (AsynchronousCloseException e) {
                    // Only when poll itself threw (then that exception goes on): nobody else closes it.
                }
            }
            if (n < 0) {
                int err = Errno.last();
                if (err == Errno.EINTR) {
                    continue;
                }
                fail(new ErrnoException(err));
                return waker.seq() != seen;
            }
            if (n == 0) {
                continue;
            }
            if (revents(8) != 0) {
                LibcFiles.read(efd, counter, 8); // a kick: re-check our waker and the time
            }
            if (revents(0) != 0 && !readEvents(waker)) {
                return waker.seq() != seen;
            }
        }
    }

    /** Reads every event queued now and passes it on; false if reading failed (the watcher is then dead). */
    private boolean readEvents(Waker self) {
        while (true) {
            long n = LibcFiles.read(ifd, events, events.length);
            if (n < 0) {
                int err = Errno.last();
                if (err == Errno.EAGAIN) {
                    return true;
                }
                if (err == Errno.EINTR) {
                    continue;
                }
                fail(new ErrnoException(err));
                return false;
            }
            if (n == 0) {
                return true;
            }
            long before = self.seq();
            dispatch(events, (int) n, self);
            if (self.seq() != before) {
                ownWakeups.incrementAndGet();
            }
        }
    }

    /** Ends the poll(2) of the leader early (it re-checks its waker, the time and its interrupt status). */
    void kick() {
        int fd = efd;
        if (fd >= 0) {
            LibcFiles.write(fd, ONE, 8);
        }
    }

    private void putPollFd(int off, int fd) {
        pollFds[off] = (byte) fd;
        pollFds[off + 1] = (byte) (fd >>> 8);
        pollFds[off + 2] = (byte) (fd >>> 16);
        pollFds[off + 3] = (byte) (fd >>> 24);
        pollFds[off + 4] = (byte) LibcEvents.POLLIN; // short events (little-endian, as LibcFiles reads structs)
        pollFds[off + 5] = 0;
        pollFds[off + 6] = 0; // short revents
        pollFds[off + 7] = 0;
    }

    private int revents(int off) {
        return (pollFds[off + 6] & 0xff) | (pollFds[off + 7] & 0xff) << 8;
    }

    /** Reading inotify failed: every watch is dead, every waiter is woken and polls from now on. */
    private void fail(Throwable e) {
        log.error("reading inotify failed; waiters fall back to polling", e);
        List<Inode> all;
        lock.lock();
        try {
            failed = true;
            all = new ArrayList<>(byWd.values());
            for (Inode inode : all) {
                inode.dead = true;
            }
            byWd.clear();
            idle.clear();
            idleCount = 0;
            for (Waker f : followers) {
                f.promote(); // they see 'failed' and wait on their own
            }
        } finally {
            lock.unlock();
        }
        wake(all, null);
    }

    private void dispatch(byte[] buf, int len, Waker self) {
        for (int off = 0; off + 16 <= len; ) {
            // struct inotify_event: int wd, u32 mask, u32 cookie, u32 len, char name[len]
            int wd = LibcFiles.getInt(buf, off);
            int mask = LibcFiles.getInt(buf, off + 4);
            int padded = LibcFiles.getInt(buf, off + 12);
            int nameOff = off + 16;
            int nameLen = 0;
            while (nameLen < padded && buf[nameOff + nameLen] != 0) {
                nameLen++;
            }
            off += 16 + padded;
            if ((mask & LibcEvents.IN_Q_OVERFLOW) != 0) {
                log.debug("inotify queue overflow: waking every waiter");
                wake(new ArrayList<>(byWd.values()), self);
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
                    wake(w.waker, self);
                }
                continue;
            }
            for (Watch w : inode.watches) {
                if ((mask & LibcEvents.IN_UNMOUNT) != 0) {
                    wake(w.waker, self);
                } else if ((w.events & mask) != 0) {
                    NameFilter f = w.filter;
                    if (f == null || nameLen == 0 || f.wants(mask, buf, nameOff, nameLen)) {
                        wake(w.waker, self);
                    }
                }
            }
        }
    }

    /** Wakes {@code w}; the reading thread's own waker needs no kick of its poll (it is running). */
    private static void wake(Waker w, Waker self) {
        if (w == self) {
            w.bump();
        } else {
            w.wake();
        }
    }

    private static void wake(List<Inode> inodes, Waker self) {
        for (Inode inode : inodes) {
            for (Watch w : inode.watches) {
                wake(w.waker, self);
            }
        }
    }
}
