package dev.interlock.file.dir;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Local wake-ups: one inotify instance per backend and one daemon thread that reads it. A waiter
 * {@linkplain #watch registers} its lock directory before its first try and then waits for the
 * directory's change counter to move past the value it read when its try began, so a release
 * between the try and the wait is never missed. inotify sees changes made on this host only
 * (also over NFS); changes made by other hosts are found by the bounded poll of the waiters.
 */
final class DirWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DirWatcher.class);
    private static final int MASK = Posix.IN_CREATE | Posix.IN_DELETE | Posix.IN_MOVED_FROM | Posix.IN_MOVED_TO
            | Posix.IN_DELETE_SELF | Posix.IN_MOVE_SELF | Posix.IN_ONLYDIR | Posix.IN_DONT_FOLLOW;

    /** Change counter of one watched directory. */
    static final class Watch {
        final int wd;
        int users;
        long version;

        Watch(int wd) {
            this.wd = wd;
        }

        synchronized long version() {
            return version;
        }

        synchronized void bump() {
            version++;
            notifyAll();
        }

        /** Waits until the version differs from {@code seen} or {@code nanos} pass. */
        synchronized void awaitChange(long seen, long nanos) throws InterruptedException {
            long end = System.nanoTime() + nanos;
            while (version == seen) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                wait(Math.max(1, left / 1_000_000), 0);
            }
        }
    }

    private final String description;
    private final int fd;
    /** An eventfd written by {@link #close()} to end the reader thread's poll at once. */
    private final int wakeFd;
    private final Map<Integer, Watch> byWd = new HashMap<>();
    private final Thread thread;
    private volatile boolean closed;

    private DirWatcher(String description, int fd, int wakeFd) {
        this.description = description;
        this.fd = fd;
        this.wakeFd = wakeFd;
        this.thread = new Thread(this::run, "interlock-dir-watch");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** A watcher, or null if inotify is unavailable (waiters then poll). */
    static DirWatcher open(String description) {
        try {
            int fd = Posix.inotify_init1(Posix.IN_NONBLOCK | Posix.IN_CLOEXEC);
            int wake;
            try {
                wake = Posix.eventfd(0, Posix.IN_NONBLOCK | Posix.IN_CLOEXEC); // EFD_* equal IN_* (O_NONBLOCK, O_CLOEXEC)
            } catch (LastErrorException e) {
                Posix.close(fd);
                throw e;
            }
            return new DirWatcher(description, fd, wake);
        } catch (LastErrorException | UnsupportedOperationException | UnsatisfiedLinkError e) {
            log.warn("{} - inotify unavailable ({}); waiters will poll", description, e.getMessage());
            return null;
        }
    }

    /** Starts watching {@code path} (a lock directory); null if it cannot be watched. */
    synchronized Watch watch(String path) {
        if (closed) {
            return null;
        }
        int wd;
        try {
            wd = Posix.inotify_add_watch(fd, path, MASK);
        } catch (LastErrorException e) {
            log.debug("{} - cannot watch {}: {}; polling instead", description, path, Posix.describe(e));
            return null;
        }
        Watch w = byWd.computeIfAbsent(wd, Watch::new);
        w.users++;
        return w;
    }

    synchronized void unwatch(Watch w) {
        if (w == null || --w.users > 0) {
            return;
        }
        byWd.remove(w.wd, w);
        if (!closed) {
            try {
                Posix.inotify_rm_watch(fd, w.wd);
            } catch (LastErrorException e) {
                // already gone (directory deleted: IN_IGNORED)
            }
        }
    }

    private void run() {
        try (Memory pfd = new Memory(16)) {
            byte[] bytes = new byte[64 * 1024];
            while (!closed) {
                pfd.setInt(0, fd);
                pfd.setShort(4, Posix.POLLIN);
                pfd.setShort(6, (short) 0);
                pfd.setInt(8, wakeFd);
                pfd.setShort(12, Posix.POLLIN);
                pfd.setShort(14, (short) 0);
                try {
                    if (Posix.poll(pfd, 2, 10_000) <= 0) {
                        continue;
                    }
                } catch (LastErrorException e) {
                    continue; // EINTR
                }
                while (!closed) {
                    long n;
                    try {
                        n = Posix.read(fd, bytes, bytes.length);
                    } catch (LastErrorException e) {
                        break; // EAGAIN: drained
                    }
                    if (n <= 0) {
                        break;
                    }
                    int off = 0;
                    while (off + 16 <= n) {
                        int wd = intAt(bytes, off);
                        int len = intAt(bytes, off + 12);
                        Watch w;
                        synchronized (this) {
                            w = byWd.get(wd);
                        }
                        if (w != null) {
                            w.bump();
                        }
                        off += 16 + len;
                    }
                }
            }
        } catch (Throwable t) {
            log.error("{} - inotify thread failed; waiters fall back to polling", description, t);
        }
    }

    private static int intAt(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            Posix.write(wakeFd, new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, 8);
        } catch (LastErrorException e) {
            // the thread then ends at its next poll timeout
        }
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int f : new int[] {fd, wakeFd}) {
            try {
                Posix.close(f);
            } catch (LastErrorException e) {
                // ignore
            }
        }
    }
}
