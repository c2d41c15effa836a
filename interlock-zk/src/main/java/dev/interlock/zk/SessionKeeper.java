package dev.interlock.zk;

import dev.interlock.Ticker;
import dev.interlock.spi.support.Log;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * Keeps a space's ZooKeeper session: opens it when a lock needs one, proves it alive with a
 * {@code sync} every fifteenth of its timeout (a sync goes through the leader, so a server cut off
 * from the quorum cannot answer it), watches the nodes of the locks granted since its last look,
 * and ends it at its {@link SessionDeadline loss point} or when the servers say it expired,
 * telling its grants. An ended session that this space opened is
 * closed, so its nodes go at once if the servers still hear it; the next acquisition opens a new one.
 */
final class SessionKeeper implements AutoCloseable {
    private static final Log log = Log.of(SessionKeeper.class);

    private final ZkLocation loc;
    /** The application's client, or null: this space opens its own sessions. */
    private final ZooKeeper given;

    private final Ticker ticker;
    private final ZkFailures failures;
    private final ThreadFactory threads;
    private final ScheduledExecutorService timer;
    private final ReentrantLock opening = new ReentrantLock();
    private volatile ZkSession current;
    private volatile boolean closed;

    SessionKeeper(ZkLocation loc, ZooKeeper given, Ticker ticker, ZkFailures failures, ThreadFactory threads) {
        this.loc = loc;
        this.given = given;
        this.ticker = ticker;
        this.failures = failures;
        this.threads = threads;
        this.timer = Executors.newSingleThreadScheduledExecutor(threads);
        timer.schedule(this::tick, period(loc.session.toNanos()), TimeUnit.NANOSECONDS);
    }

    private static long period(long timeoutNanos) {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(10), timeoutNanos / 15);
    }

    /**
     * The live session, opened if there is none.
     *
     * @throws dev.interlock.LockBackendException if the ensemble cannot be reached in time
     */
    ZkSession session() {
        ZkSession s = current;
        if (s != null && !s.ended()) {
            return s;
        }
        opening.lock();
        try {
            s = current;
            if (s != null && !s.ended()) {
                return s;
            }
            if (closed) {
                throw new IllegalStateException(failures.failures.where(null) + "the space is closed");
            }
            s = given != null ? adopt() : open();
            current = s;
            return s;
        } finally {
            opening.unlock();
        }
    }

    /** The session that is live now, or null; opens nothing. */
    ZkSession currentIfLive() {
        ZkSession s = current;
        return s == null || s.ended() ? null : s;
    }

    private ZkSession open() {
        CountDownLatch connected = new CountDownLatch(1);
        AtomicBoolean authFailed = new AtomicBoolean();
        // Set once the session is made; the watcher runs on the client's event thread.
        AtomicReference<ZkSession> made = new AtomicReference<>();
        Watcher watcher = event -> {
            ZkSession s = made.get();
            if (s != null) {
                s.connection.signal();
            }
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            } else if (event.getState() == Watcher.Event.KeeperState.AuthFailed) {
                authFailed.set(true);
                connected.countDown();
            } else if (event.getState() == Watcher.Event.KeeperState.Expired && s != null) {
                endAndClose(s, "the ZooKeeper session expired on the servers");
            }
        };
        long start = ticker.read();
        ZooKeeper zk;
        try {
            zk = new ZooKeeper(loc.ensemble, (int) Math.min(Integer.MAX_VALUE, loc.session.toMillis()), watcher);
        } catch (IOException | IllegalArgumentException e) {
            throw failures.failures.refused(
                    null,
                    "cannot use the ZooKeeper servers " + loc.ensemble + " (" + e.getMessage()
                            + "): check the host names",
                    e);
        }
        if (loc.user != null) {
            // Queued before any request, and sent again by the client on every reconnection.
            zk.addAuthInfo("digest", (loc.user + ":" + loc.password).getBytes(StandardCharsets.UTF_8));
        }
        boolean ok;
        try {
            ok = connected.await(loc.connect.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            closeQuietly(zk);
            throw failures.interrupted(null, "connecting to " + loc.ensemble, e);
        }
        if (authFailed.get()) {
            closeQuietly(zk);
            throw failures.failures.refused(
                    null,
                    "the ZooKeeper servers refused the credentials of the user " + loc.user
                            + ": check the user name and password",
                    null);
        }
        if (!ok) {
            closeQuietly(zk);
            throw failures.failures.unreachable(
                    null,
                    "could not reach the ZooKeeper ensemble at " + loc.ensemble + " within "
                            + loc.connect.toMillis()
                            + "ms: check the addresses, and that a majority of its servers runs (the URI option"
                            + " connect= sets how long to wait)",
                    null);
        }
        ZkSession s = new ZkSession(
                zk, true, new SessionDeadline(TimeUnit.MILLISECONDS.toNanos(zk.getSessionTimeout()), start));
        made.set(s);
        if (!zk.getState().isAlive()) {
            s.end("the ZooKeeper session expired before it was used");
        }
        log.debug("{} - opened {} (timeout {}ms)", loc.description(), s, zk.getSessionTimeout());
        return s;
    }

    /** The application's client: one sync proves it answers, and starts its deadline. */
    private ZkSession adopt() {
        if (!given.getState().isAlive()) {
            throw failures.failures.refused(
                    null,
                    "the ZooKeeper client given to this space has no session any more (it was closed,"
                            + " or its session expired): open the space on a new client",
                    null);
        }
        long start = ticker.read();
        CountDownLatch answered = new CountDownLatch(1);
        int[] rc = {-1};
        given.sync(
                "/",
                (code, path, ctx) -> {
                    rc[0] = code;
                    answered.countDown();
                },
                null);
        try {
            if (!answered.await(loc.connect.toNanos(), TimeUnit.NANOSECONDS)
                    || rc[0] != KeeperException.Code.OK.intValue()) {
                throw failures.failures.unreachable(
                        null,
                        "the ZooKeeper client given to this space did not reach its ensemble within "
                                + loc.connect.toMillis() + "ms",
                        null);
            }
        } catch (InterruptedException e) {
            throw failures.interrupted(null, "checking the given ZooKeeper client", e);
        }
        return new ZkSession(
                given, false, new SessionDeadline(TimeUnit.MILLISECONDS.toNanos(given.getSessionTimeout()), start));
    }

    private void tick() {
        ZkSession s = current;
        long next = period(s == null ? loc.session.toNanos() : s.deadline.timeoutNanos());
        try {
            keep();
        } catch (RuntimeException e) {
            log.warn("{} - session keeping failed: {}", loc.description(), e.toString());
        } finally {
            if (!closed) {
                timer.schedule(this::tick, next, TimeUnit.NANOSECONDS);
            }
        }
    }

    /** Every period: the loss rule, then a heartbeat, then the deletes that found no connection. Package-private for tests. */
    void keep() {
        ZkSession s = current;
        if (s == null || endIfPastLossPoint(s)) {
            return;
        }
        heartbeat(s);
        s.watchGrants();
        s.retryDeletes();
    }

    /**
     * Ends {@code s} if it has ended or its loss point has passed, as the timer would at its next
     * look; an acquisition asks before it grants, so that no grant is made on a session that is
     * already past it (a paused or starved process whose timer has not run yet).
     *
     * @return true if {@code s} has ended
     */
    boolean endIfPastLossPoint(ZkSession s) {
        if (s.ended()) {
            return true;
        }
        long now = ticker.read();
        if (!s.deadline.pastLossPoint(now)) {
            return false;
        }
        endAndClose(
                s,
                "no answer from the ZooKeeper ensemble for "
                        + TimeUnit.NANOSECONDS.toMillis(s.deadline.silenceNanos(now))
                        + "ms, so the session (timeout " + TimeUnit.NANOSECONDS.toMillis(s.deadline.timeoutNanos())
                        + "ms) may expire in "
                        + TimeUnit.NANOSECONDS.toMillis(Math.max(0, s.deadline.earliestExpiry() - now))
                        + "ms: its locks are declared lost before it can");
        return true;
    }

    private void heartbeat(ZkSession s) {
        long sent = ticker.read();
        s.zk.sync(
                "/",
                (rc, path, ctx) -> {
                    if (rc == KeeperException.Code.OK.intValue()) {
                        s.deadline.confirmed(sent);
                        s.deadlineMoved();
                    }
                },
                null);
    }

    /** Ends {@code s}, telling its grants, and closes it if this space opened it. */
    void endAndClose(ZkSession s, String why) {
        if (s.end(why)) {
            log.info("{} - {} ended: {}", loc.description(), s, why);
            if (s.owned) {
                Thread t = threads.newThread(() -> closeQuietly(s.zk));
                t.start();
            }
        }
    }

    private static void closeQuietly(ZooKeeper zk) {
        try {
            zk.close((int) Duration.ofSeconds(2).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        opening.lock();
        try {
            ZkSession s = current;
            if (s != null) {
                s.end("the lock space was closed");
                if (s.owned) {
                    closeQuietly(s.zk);
                }
            }
        } finally {
            opening.unlock();
        }
    }
}
