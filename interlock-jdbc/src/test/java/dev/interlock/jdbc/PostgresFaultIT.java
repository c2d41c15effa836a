package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.Stacks;
import dev.interlock.testkit.Timing;
import dev.interlock.testservers.PostgresServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Faults under a held lease, on a PostgreSQL server of this class's own (so it may be stopped,
 * restarted, cut off and paused). The server commits asynchronously by default and its WAL writer
 * sleeps 10s, so that a commit that is not explicitly synchronous stays unflushed long enough to see;
 * nothing else writes WAL in the background.
 */
class PostgresFaultIT {
    private static PostgresServer server;
    private static String url;
    private static ExecutorService pool;

    @BeforeAll
    static void start() {
        // No WAL but ours between two looks at it: no standby snapshots (wal_level=minimal), no autovacuum.
        server = PostgresServer.start(Map.of(
                "synchronous_commit",
                "off",
                "wal_writer_delay",
                "10000ms",
                "wal_level",
                "minimal",
                "max_wal_senders",
                "0",
                "autovacuum",
                "off"));
        url = server.url();
        pool = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        pool.shutdownNow();
        server.stop();
    }

    private static String url(String table, String app) {
        return TestServers.withOptions(url, "table=" + table + "&create=true&ApplicationName=" + app + "&timeout=2s");
    }

    private static long queryLong(String sql) {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Terminates every server process of connections with this application name. */
    private static long cut(String app) {
        return queryLong(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" + app + "'");
    }

    @Test
    void acquireAndRenew_commitSynchronously_onAServerThatDoesNot() throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "sync"))) {
            locks.tryAcquire("warm-up").orElseThrow().close();
            try (Connection c = DriverManager.getConnection(url);
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS scratch (n int)");
                // The control: an ordinary commit on this server is not flushed at once.
                st.execute("INSERT INTO scratch VALUES (1)");
                assertThat(unflushed(st))
                        .as("an ordinary commit here is asynchronous")
                        .isPositive();
                Lease l = locks.lock("durable")
                        .lease(Duration.ofMinutes(5))
                        .fixedLease()
                        .tryAcquire()
                        .orElseThrow();
                assertThat(unflushed(st))
                        .as("WAL not yet flushed after a grant")
                        .isZero();
                st.execute("INSERT INTO scratch VALUES (2)");
                assertThat(unflushed(st)).isPositive();
                l.renew();
                assertThat(unflushed(st))
                        .as("WAL not yet flushed after a renewal")
                        .isZero();
                l.close();
            }
        }
    }

    @Test
    void release_commitsAsynchronously_evenWhereCommitsAreSynchronous() throws Exception {
        String table = TestServers.table();
        // Interlock's sessions commit synchronously (pgjdbc's options parameter), unlike this server.
        try (LockSpace locks = Interlock.open(url(table, "async") + "&options=-c%20synchronous_commit%3Don")) {
            locks.tryAcquire("warm-up").orElseThrow().close();
            try (Connection c = DriverManager.getConnection(url);
                    Statement st = c.createStatement()) {
                Lease l = locks.lock("released")
                        .lease(Duration.ofMinutes(5))
                        .fixedLease()
                        .tryAcquire()
                        .orElseThrow();
                assertThat(unflushed(st))
                        .as("WAL not yet flushed after a grant")
                        .isZero();
                l.close();
                // A lost release only keeps the lock until its lease runs out: its commit need not wait for the disk.
                assertThat(unflushed(st))
                        .as("WAL not yet flushed after the release")
                        .isPositive();
                assertThat(locks.tryAcquire("released"))
                        .as("the release is visible at once")
                        .isPresent();
                assertThat(unflushed(st)).as("the next grant flushes it").isZero();
            }
        }
    }

    /**
     * A permit's try is two statements committed at once in autocommit mode (docs/jdbc.md,
     * "Semaphores"): its grant must still commit synchronously, on a name's first use as after,
     * and a busy try, which commits the row lock's no-op, need not wait for the disk.
     */
    @Test
    void permitGrant_commitsSynchronously_aBusyTry_asynchronously() throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "permits"));
                LockSpace syncSession =
                        Interlock.open(url(table, "permits-sync") + "&options=-c%20synchronous_commit%3Don")) {
            locks.tryAcquire("warm-up").orElseThrow().close();
            try (Connection c = DriverManager.getConnection(url);
                    Statement st = c.createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS scratch (n int)");
                List<Lease> held = new ArrayList<>();
                for (String use : List.of("the name's first use", "a later grant")) {
                    st.execute("INSERT INTO scratch VALUES (1)");
                    assertThat(unflushed(st))
                            .as("an ordinary commit here is asynchronous")
                            .isPositive();
                    held.add(locks.lock("permits")
                            .limit(2)
                            .lease(Duration.ofMinutes(5))
                            .fixedLease()
                            .tryAcquire()
                            .orElseThrow());
                    assertThat(unflushed(st))
                            .as("WAL not yet flushed after " + use)
                            .isZero();
                }
                assertThat(syncSession.lock("permits").limit(2).tryAcquire())
                        .as("a third of 2")
                        .isEmpty();
                assertThat(unflushed(st))
                        .as("WAL not yet flushed after a busy try, on a session that commits synchronously")
                        .isPositive();
                held.forEach(Lease::close);
            }
        }
    }

    /** Bytes of WAL inserted but not yet flushed to disk. */
    private static long unflushed(Statement st) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT pg_current_wal_insert_lsn() - pg_current_wal_flush_lsn()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void serverRestart_underAHeldLease_keepsTheLeaseAndTheTokens() throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "restart"));
                LockSpace other = Interlock.open(url(table, "restart-other"))) {
            Lease held =
                    locks.lock("job").lease(Duration.ofSeconds(60)).tryAcquire().orElseThrow();
            server.stop();
            assertThatThrownBy(held::renew)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("cannot reach the database")
                    .satisfies(e ->
                            assertThat(((LockBackendException) e).isTransient()).isTrue());
            assertThat(held.isValid())
                    .as("valid until its deadline while the server is away")
                    .isTrue();
            server.startAgain();
            held.renew(); // on a fresh connection: the pooled ones died with the server
            assertThat(held.isValid()).isTrue();
            assertThat(other.tryAcquire("job"))
                    .as("still held after the restart")
                    .isEmpty();
            long token = held.token();
            held.close();
            try (Lease next = other.tryAcquire("job").orElseThrow()) {
                assertThat(next.token()).isGreaterThan(token);
            }
        }
    }

    @Test
    void serverDown_holderIsToldBeforeTheLeaseRunsOut() throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "down"))) {
            AtomicLong lostAt = new AtomicLong();
            long start = System.nanoTime();
            Lease held = locks.lock("job")
                    .lease(Duration.ofSeconds(3))
                    .onLost(e -> lostAt.set(System.nanoTime()))
                    .tryAcquire()
                    .orElseThrow();
            server.stop();
            try {
                await().atMost(Timing.seconds(10)).until(() -> lostAt.get() != 0);
                assertThat(lostAt.get() - start)
                        .as("told before the lease could run out")
                        .isLessThan(Duration.ofSeconds(3).toNanos());
                assertThat(held.isValid()).isFalse();
            } finally {
                server.startAgain();
            }
            try (Lease next = locks.lock("job").lease(Duration.ofSeconds(3)).acquire(Timing.seconds(20))) {
                assertThat(next.token()).isGreaterThan(held.token());
            }
        }
    }

    @Test
    void connectionCut_underAHolder_renewsAndReleasesOnAFreshConnection() throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "cut"));
                LockSpace other = Interlock.open(url(table, "cut-other"))) {
            Lease held =
                    locks.lock("job").lease(Duration.ofSeconds(60)).tryAcquire().orElseThrow();
            Lease reader = locks.tryAcquire("shared", Mode.SHARED).orElseThrow();
            assertThat(cut("cut")).isPositive();
            held.renew();
            reader.renew();
            assertThat(other.tryAcquire("job")).isEmpty();
            cut("cut");
            held.close();
            reader.close();
            other.tryAcquire("job").orElseThrow().close();
            other.tryAcquire("shared").orElseThrow().close();
        }
    }

    @Test
    void listenConnectionCut_waiterIsStillWoken() throws Exception {
        String table = TestServers.table();
        try (LockSpace holder = Interlock.open(url(table, "lh"));
                LockSpace waiter = Interlock.open(url(table, "lw"))) {
            Lease held = holder.tryAcquire("job").orElseThrow();
            Future<Lease> got = pool.submit(() -> waiter.acquire("job", Timing.seconds(60)));
            await().atMost(Timing.seconds(10))
                    .until(() -> queryLong(
                                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lw' AND query LIKE 'LISTEN%'")
                            == 1);
            cut("lw"); // the LISTEN connection and any idle one
            held.close(); // its notification may be lost with the connection: polling must find the release
            Lease l = got.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(l.token()).isGreaterThan(held.token());
            l.close();
        }
    }

    @Test
    void handoff_isWokenByNotify_notByPolling() throws Exception {
        String table = TestServers.table();
        try (LockSpace a = Interlock.open(url(table, "ha"));
                LockSpace b = Interlock.open(url(table, "hb"))) {
            List<Long> handoffs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Lease held = a.tryAcquire("hot").orElseThrow();
                Future<Long> got = pool.submit(() -> {
                    Lease l = b.acquire("hot", Timing.seconds(60));
                    long at = System.nanoTime();
                    l.close();
                    return at;
                });
                // Let the waiter's polling back off to its longest interval (1s while it listens).
                await().pollDelay(Duration.ofMillis(2500))
                        .atMost(Timing.seconds(10))
                        .until(() -> !got.isDone());
                long released = System.nanoTime();
                held.close();
                handoffs.add(TimeUnit.NANOSECONDS.toMillis(
                        got.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS) - released));
            }
            Collections.sort(handoffs);
            assertThat(handoffs.get(1))
                    .as("median handoff in ms (polling alone would average about 375ms): %s", handoffs)
                    .isLessThan(200);
        }
    }

    @Test
    void hungServer_failsTheCallInTime_andTheHolderIsToldBeforeItsDeadline() throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "hung"))) {
            AtomicLong lostAt = new AtomicLong();
            long start = System.nanoTime();
            Lease held = locks.lock("job")
                    .lease(Duration.ofSeconds(3))
                    .onLost(e -> lostAt.set(System.nanoTime()))
                    .tryAcquire()
                    .orElseThrow();
            JdbcLockBackend backend = (JdbcLockBackend) Spaces.backend(locks);
            List<Long> pids = serverPids();
            signal("STOP", pids);
            try {
                long t = System.nanoTime();
                Future<?> renew = pool.submit(() -> backend.store.renew(
                        "job", Mode.EXCLUSIVE, held.owner().id(), held.token(), 0, Duration.ofSeconds(3)));
                assertThatThrownBy(() -> renew.get(30, TimeUnit.SECONDS))
                        .as("a hung server fails the call, it does not hang it")
                        .hasCauseInstanceOf(LockBackendException.class);
                // At most two connections are tried (the pooled one, then a fresh one), each for timeout + 5s.
                assertThat(System.nanoTime() - t)
                        .as("within twice (timeout + 5s)")
                        .isLessThan(Duration.ofSeconds(2 * 7 + 2).toNanos());
                await().atMost(Timing.seconds(10)).until(() -> lostAt.get() != 0);
                assertThat(lostAt.get() - start)
                        .isLessThan(Duration.ofSeconds(3).toNanos());
            } finally {
                signal("CONT", pids);
            }
            assertThatThrownBy(held::renew).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void rowLockedByAnotherTransaction_theStatementIsCancelledAtTheTimeout_notAbandonedAtTheNetworkTimeout()
            throws Exception {
        String table = TestServers.table();
        try (LockSpace locks = Interlock.open(url(table, "rowlock"));
                Connection other = DriverManager.getConnection(url)) {
            locks.tryAcquire("job").orElseThrow().close();
            other.setAutoCommit(false);
            try (Statement st = other.createStatement()) {
                st.executeQuery("SELECT 1 FROM " + table + " WHERE name = 'job' FOR UPDATE")
                        .close();
                long t = System.nanoTime();
                assertThatThrownBy(() -> locks.tryAcquire("job")).isInstanceOf(LockBackendException.class);
                long ms = (System.nanoTime() - t) / 1_000_000;
                // timeout=2s: cancelled on the server at 2 s (per connection tried), not given up by the
                // client at the network timeout (7 s), which would leave the statement waiting there.
                assertThat(ms).as("ms until the call failed").isBetween(1_900L, 6_500L);
                assertThat(
                                queryLong(
                                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rowlock' AND wait_event_type = 'Lock'"))
                        .as("statements of ours still waiting on the server")
                        .isZero();
            } finally {
                other.rollback();
            }
            locks.tryAcquire("job").orElseThrow().close();
        }
    }

    /**
     * Issue 25: a grant that reaches the caller after a pause longer than its lease (as this
     * process counts it) was returned already lost. It must be given back and the wait go on.
     * The pause is seen through the space's ticker, which jumps while the try is held up on the
     * stopped server.
     */
    @Test
    void grantThatArrivesTooLate_isGivenBack_andAcquireReturnsALiveLease() throws Exception {
        String table = TestServers.table();
        AtomicLong jump = new AtomicLong();
        try (LockSpace locks = Interlock.builder(url(table, "late"))
                .ticker(() -> System.nanoTime() + jump.get())
                .open()) {
            locks.tryAcquire("late").orElseThrow().close(); // the row exists: the try is one statement
            Duration lease = Duration.ofSeconds(2);
            java.util.concurrent.atomic.AtomicReference<Thread> acquiring =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Future<Lease> acquired;
            List<Long> pids = serverPids();
            signal("STOP", pids);
            try {
                acquired = pool.submit(() -> {
                    acquiring.set(Thread.currentThread());
                    return locks.lock("late").lease(lease).acquire(Duration.ofSeconds(30));
                });
                await().atMost(Timing.seconds(10))
                        .until(() -> Stacks.inCall(acquiring.get(), "dev.interlock.jdbc.LockStore"));
                jump.addAndGet(2 * lease.toNanos());
            } finally {
                signal("CONT", pids);
            }
            try (Lease l = acquired.get(20, TimeUnit.SECONDS)) {
                assertThat(l.isValid()).as("a live lease, not one already lost").isTrue();
                assertThat(l.validUntil()).isAfter(java.time.Instant.now());
                assertThat(locks.status("late").holders())
                        .as("only the live grant: the late one was given back")
                        .hasSize(1);
            }
        }
    }

    /**
     * Issue 25: a waiter's try that the server ran only at the resume of a pause, after the waiter
     * had stopped listening for its answer, granted the lock to the waiter's own owner id; the
     * waiter, riding the pause out, then found the lock held (by its own ghost) for a whole lease.
     */
    @Test
    void serverPausedUnderAWaiter_itsTryRunLate_theWaiterGetsTheLockAtTheResume() throws Exception {
        String table = TestServers.table();
        try (LockSpace holder = Interlock.open(url(table, "ghostholder"));
                LockSpace waiting = Interlock.open(url(table, "ghostwaiter"))) {
            holder.lock("job")
                    .lease(Duration.ofSeconds(2))
                    .fixedLease()
                    .tryAcquire()
                    .orElseThrow();
            java.util.concurrent.atomic.AtomicReference<Thread> acquiring =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Future<Lease> waiter = pool.submit(() -> {
                acquiring.set(Thread.currentThread());
                return waiting.lock("job").lease(Duration.ofSeconds(60)).acquire(Duration.ofSeconds(120));
            });
            List<Long> pids = serverPids();
            long resumedAt;
            signal("STOP", pids);
            try {
                // Its try gets no answer (the holder's lease runs out meanwhile on the server's clock);
                // resume while it waits between two tries, so that the late one runs first.
                await().atMost(Timing.seconds(60))
                        .pollInterval(Duration.ofMillis(2))
                        .until(() -> Stacks.inCall(acquiring.get(), "dev.interlock.internal.WaitFaults"));
            } finally {
                signal("CONT", pids);
                resumedAt = System.nanoTime();
            }
            try (Lease l = waiter.get(30, TimeUnit.SECONDS)) {
                assertThat(Duration.ofNanos(System.nanoTime() - resumedAt))
                        .as("granted soon after the resume")
                        .isLessThan(Duration.ofSeconds(3));
                assertThat(l.isValid()).isTrue();
            }
        }
    }

    /**
     * {@code interlock run -w 5s} on a paused PostgreSQL returned after 11.4 s: a try in flight
     * waited for its statement timeout (10 s by default here), not for the wait's deadline. Each
     * statement, and the opening of a connection, now ends by the time left of the wait. The
     * pooled connection still open at the pause: the statement is cut off on it.
     */
    @Test
    void pausedServer_aTimedAcquireOnAnOpenConnection_returnsByItsDeadline() throws Exception {
        timedAcquireOnAPausedServer("deadlineopen", false);
    }

    /** As above, with no connection left open at the pause (closed idle): opening one is bounded too. */
    @Test
    void pausedServer_aTimedAcquireThatMustConnect_returnsByItsDeadline() throws Exception {
        timedAcquireOnAPausedServer("deadlinenew", true);
    }

    private void timedAcquireOnAPausedServer(String app, boolean idleClosed) throws Exception {
        String table = TestServers.table();
        // The default statement timeout (10 s): the deadline of the wait must come first.
        try (LockSpace locks = Interlock.open(
                TestServers.withOptions(url, "table=" + table + "&create=true&ApplicationName=" + app))) {
            locks.tryAcquire("job").orElseThrow().close(); // the row exists
            if (idleClosed) {
                await().atMost(Timing.seconds(10))
                        .until(() -> queryLong("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app
                                        + "' AND query NOT LIKE 'LISTEN%'")
                                == 0);
            }
            List<Long> pids = serverPids();
            signal("STOP", pids);
            try {
                long t = System.nanoTime();
                Future<Lease> acquired = pool.submit(() -> locks.lock("job").acquire(Duration.ofSeconds(2)));
                assertThatThrownBy(() -> acquired.get(30, TimeUnit.SECONDS))
                        .as("no grant from a paused server")
                        .cause()
                        .isInstanceOf(LockBackendException.class);
                assertThat(Duration.ofNanos(System.nanoTime() - t))
                        .as("acquire(2s) on a paused server returns by its deadline, not at the statement timeout")
                        // 2 s + the floor and cut-off of the last statement; scaled on a slow machine, but always
                        // below the 10 s statement timeout that the old code waited for.
                        .isLessThan(min(Timing.seconds(4), Duration.ofSeconds(9)));
            } finally {
                signal("CONT", pids);
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** The postmaster (first line of postmaster.pid) and its children. */
    private static List<Long> serverPids() throws IOException {
        Path data = Path.of(queryString("SHOW data_directory"));
        long postmaster = Long.parseLong(
                Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
        List<Long> pids = new ArrayList<>();
        pids.add(postmaster);
        ProcessHandle.of(postmaster).orElseThrow().children().forEach(p -> pids.add(p.pid()));
        return pids;
    }

    private static String queryString(String sql) {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static void signal(String sig, List<Long> pids) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + sig));
        pids.forEach(p -> cmd.add(Long.toString(p)));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
}
