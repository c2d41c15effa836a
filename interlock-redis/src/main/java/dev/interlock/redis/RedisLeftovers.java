package dev.interlock.redis;

import dev.interlock.LockBackendException;
import dev.interlock.spi.support.Log;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What abandoned attempts may have left on a server that did not answer when they gave up: a
 * place in the queue, or a grant made by a try whose answer never came. An attempt that stops
 * waiting sends its leave script (which drops both, by its owner id); if that gets no answer
 * either (the server is paused, restarting, unreachable), the leave is handed here and sent
 * again, in the background, until the server answers. Until then the place would keep later
 * waiters out for up to 5 s, and a grant for a whole lease, with nobody to use it.
 *
 * <p>Owner ids are unique to each acquisition, and an attempt hands its leave here only when it
 * returned no grant, so a leave sent late can never take away a lock that someone uses.
 *
 * <p>One daemon thread, started at the first leftover and ended when none is left; the leaves are
 * tried in turn, and a round stops at the first failure, since the server that failed one would
 * fail the rest. Leftovers older than {@link #GIVE_UP_NANOS} are dropped: by then whatever they
 * left has expired on the server (the scripts refuse tries run after their client gave up, see
 * {@link ServerDeadlines}), except on a client of the application's own, which sets no deadline.
 */
final class RedisLeftovers implements AutoCloseable {
    private static final Log log = Log.of(RedisLeftovers.class);
    /** Between two rounds while the server does not answer. */
    static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    static final long GIVE_UP_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** More than this many pending leaves: the newest are dropped (they expire on the server by themselves). */
    static final int MAX_PENDING = 1024;

    private record Leftover(String name, String ownerId, long since) {}

    private final RedisLockStore store;
    private final Map<String, Leftover> pending = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private Thread thread; // guarded by lock
    private volatile boolean closed;

    RedisLeftovers(RedisLockStore store) {
        this.store = store;
    }

    /** Sends {@code ownerId}'s leave of {@code name} again until the server answers. */
    void leaveLater(String name, String ownerId) {
        if (closed || pending.size() >= MAX_PENDING) {
            return;
        }
        pending.put(ownerId + '\n' + name, new Leftover(name, ownerId, System.nanoTime()));
        synchronized (lock) {
            if (thread == null && !closed) {
                thread = new Thread(this::loop, "interlock-redis-leftovers");
                thread.setDaemon(true);
                thread.start();
            }
        }
    }

    /** Leaves not yet answered; for tests. */
    int pending() {
        return pending.size();
    }

    private void loop() {
        while (!closed) {
            round();
            synchronized (lock) {
                if (pending.isEmpty() || closed) {
                    thread = null;
                    return;
                }
            }
            try {
                TimeUnit.NANOSECONDS.sleep(RETRY_NANOS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void round() {
        for (Iterator<Map.Entry<String, Leftover>> it = pending.entrySet().iterator(); it.hasNext() && !closed; ) {
            Leftover l = it.next().getValue();
            if (System.nanoTime() - l.since() > GIVE_UP_NANOS) {
                it.remove();
                continue;
            }
            try {
                store.leave(l.name(), l.ownerId());
                it.remove();
                log.debug(
                        "{} - '{}': the server answered again; what an abandoned attempt of {} left is gone",
                        store.description(),
                        l.name(),
                        l.ownerId());
            } catch (LockBackendException e) {
                if (!e.isTransient()) {
                    it.remove();
                    log.debug(
                            "{} - '{}': cleaning up after an abandoned attempt failed: {}",
                            store.description(),
                            l.name(),
                            e.getMessage());
                }
                return; // the server does not answer: the others would fail the same way
            } catch (RuntimeException e) {
                it.remove();
                log.debug(
                        "{} - '{}': cleaning up after an abandoned attempt failed: {}",
                        store.description(),
                        l.name(),
                        e.getMessage());
            }
        }
    }

    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            closed = true;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
        }
    }
}
