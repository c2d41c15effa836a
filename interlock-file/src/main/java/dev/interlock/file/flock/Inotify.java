package dev.interlock.file.flock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One inotify instance and one daemon thread per backend: tells waiting attempts that a lock or
 * gate file was closed by someone (a release), without polling. Watches are reference counted
 * per inode (inotify gives one watch descriptor per inode) and exist only while someone waits.
 *
 * <p>A release is a close(2) of the holder's descriptor, which raises IN_CLOSE_WRITE or
 * IN_CLOSE_NOWRITE; the kernel does the same when a holder process exits or is killed, so a
 * util-linux {@code flock(1)} holder that ends wakes our waiters too. What inotify cannot see
 * (an explicit {@code flock -u} that keeps the file open, a release on another NFS client) is
 * covered by the waiters' bounded poll.
 */
final class Inotify implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Inotify.class);
    private static final int MASK = LibC.IN_CLOSE_WRITE | LibC.IN_CLOSE_NOWRITE | LibC.IN_DELETE_SELF | LibC.IN_MOVE_SELF | LibC.IN_ATTRIB;

    /** What a waiting attempt blocks on; bumped by every event on any of its watches. */
    static final class Waker {
        private long seq;

        synchronized long seq() {
            return seq;
        }

        synchronized void bump() {
            seq++;
            notifyAll();
        }

        /** Waits until seq differs from {@code seen} or the time is up. */
        synchronized void awaitChange(long seen, long nanos) throws InterruptedException {
            long end = System.nanoTime() + nanos;
            while (seq == seen) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    /** One watched inode. */
    static final class Watch {
        final int wd;
        final Set<Waker> wakers = ConcurrentHashMap.newKeySet();
        volatile boolean dead;

        Watch(int wd) {
            this.wd = wd;
        }
    }

    private final String owner;
    private final Map<Integer, Watch> byWd = new HashMap<>();
    private int ifd = -1;
    private int efd = -1;
    private Thread thread;
    private volatile boolean closed;
    private boolean unavailable;

    Inotify(String owner) {
        this.owner = owner;
    }

    /**
     * Watches {@code path} for {@code waker}; null if inotify is unavailable or the file does not
     * exist (the caller then relies on its poll).
     */
    synchronized Watch add(byte[] path, Waker waker) {
        if (closed || !start()) {
            return null;
        }
        int wd = LibC.inotify_add_watch(ifd, path, MASK);
        if (wd < 0) {
            log.debug("{} - inotify_add_watch failed: {}", owner, LibC.describe(LibC.errno()));
            return null;
        }
        Watch w = byWd.computeIfAbsent(wd, Watch::new);
        w.wakers.add(waker);
        return w;
    }

    synchronized void remove(Watch w, Waker waker) {
        w.wakers.remove(waker);
        if (w.wakers.isEmpty() && byWd.get(w.wd) == w) {
            byWd.remove(w.wd);
            if (!w.dead && ifd >= 0) {
                LibC.inotify_rm_watch(ifd, w.wd);
            }
        }
    }

    /** Number of inodes watched; for tests. */
    synchronized int watchCount() {
        return byWd.size();
    }

    private boolean start() {
        if (thread != null) {
            return true;
        }
        if (unavailable) {
            return false;
        }
        try {
            ifd = LibC.inotify_init1(LibC.O_NONBLOCK | LibC.O_CLOEXEC);
            efd = ifd >= 0 ? LibC.eventfd(0, LibC.O_NONBLOCK | LibC.O_CLOEXEC) : -1;
        } catch (UnsatisfiedLinkError e) {
            ifd = -1;
        }
        if (ifd < 0 || efd < 0) {
            log.warn("{} - inotify is unavailable ({}); waiters poll instead", owner, LibC.describe(LibC.errno()));
            if (ifd >= 0) {
                LibC.close(ifd);
                ifd = -1;
            }
            unavailable = true;
            return false;
        }
        thread = new Thread(this::loop, "interlock-inotify");
        thread.setDaemon(true);
        thread.start();
        return true;
    }

    private void loop() {
        byte[] pfds = new byte[16];
        putInt(pfds, 0, ifd);
        pfds[4] = LibC.POLLIN;
        putInt(pfds, 8, efd);
        pfds[12] = LibC.POLLIN;
        byte[] buf = new byte[16384];
        while (!closed) {
            pfds[6] = pfds[7] = pfds[14] = pfds[15] = 0;
            int n = LibC.poll(pfds, 2, -1);
            if (n < 0) {
                int err = LibC.errno();
                if (err == LibC.EINTR) {
                    continue;
                }
                log.error("{} - inotify poll failed: {}; waiters fall back to polling", owner, LibC.describe(err));
                return;
            }
            if (closed || pfds[14] != 0) {
                return;
            }
            while (true) {
                long len = LibC.read(ifd, buf, buf.length);
                if (len <= 0) {
                    break;
                }
                dispatch(buf, (int) len);
            }
        }
    }

    private void dispatch(byte[] buf, int len) {
        List<Watch> hit = new ArrayList<>();
        synchronized (this) {
            for (int off = 0; off + 16 <= len; ) {
                int wd = getInt(buf, off);
                int mask = getInt(buf, off + 4);
                int nameLen = getInt(buf, off + 12);
                off += 16 + nameLen;
                Watch w = byWd.get(wd);
                if (w == null) {
                    continue;
                }
                if ((mask & LibC.IN_IGNORED) != 0) {
                    w.dead = true;
                    byWd.remove(wd);
                }
                hit.add(w);
            }
        }
        for (Watch w : hit) {
            for (Waker k : w.wakers) {
                k.bump();
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (efd >= 0) {
            byte[] one = {1, 0, 0, 0, 0, 0, 0, 0};
            LibC.write(efd, one, 8);
        }
        if (thread != null) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (ifd >= 0) {
            LibC.close(ifd);
        }
        if (efd >= 0) {
            LibC.close(efd);
        }
        for (Watch w : byWd.values()) {
            for (Waker k : w.wakers) {
                k.bump();
            }
        }
        byWd.clear();
    }

    private static int getInt(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    private static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >> 8);
        b[off + 2] = (byte) (v >> 16);
        b[off + 3] = (byte) (v >> 24);
    }
}
