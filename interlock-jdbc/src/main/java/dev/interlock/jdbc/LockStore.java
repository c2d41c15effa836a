package dev.interlock.jdbc;

import dev.interlock.LockBackendException;
import dev.interlock.Mode;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.PacedTimer;
import dev.interlock.spi.support.Secrets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The lock table and the statements on it, with no knowledge of the lock SPI: plain methods that
 * take a name, a mode and an owner id, and return a token or say "busy".
 *
 * <h2>Data</h2>
 * One row per name in the lock table (never deleted, so its {@code token} counter only grows):
 * the exclusive holder ({@code owner}, {@code expires_at}, {@code acquired_at}: seed 003's shape),
 * a summary of the shared holders ({@code readers}: how many are registered in the current
 * {@code epoch}; {@code shared_until}: no shared holder's lease ends later), and the writer queued
 * first ({@code waiter} until {@code waiter_until}). Each shared holder also has its own row in
 * {@code <table>_shared}, for owner-checked renewal and release and for {@code status}.
 *
 * <h2>Why it is safe at READ COMMITTED</h2>
 * Every acquisition is one conditional change of the name's row whose WHERE clause holds the
 * whole decision and reads only that row: an UPDATE (PostgreSQL: {@code INSERT ... ON CONFLICT
 * DO UPDATE ... WHERE}). The database evaluates it on the latest committed version of the row,
 * under the row's lock; a writer and a reader arriving together both change that row, so the
 * second waits for the first to commit and then decides on what the first wrote. Nothing decides
 * on another row, because a statement's view of other rows can be older than the row it locked:
 * "check, then insert" is exactly the bug this avoids. Time is the database's ({@link Dialect#now()}).
 *
 * <h2>Invariants</h2>
 * <ul>
 *   <li>{@code readers} equals the number of {@code _shared} rows of the current epoch, and is 0
 *       exactly when {@code shared_until} is null;</li>
 *   <li>{@code epoch} moves on whenever the shared holders are replaced without releasing (their
 *       leases all ran out): rows of an earlier epoch are dead, and neither renew nor count;</li>
 *   <li>{@code token} grows by one with every grant, shared or exclusive.</li>
 * </ul>
 */
final class LockStore {
    private static final Log log = Log.of(LockStore.class);

    static final List<String> LOCK_COLUMNS = List.of("name_key", "name", "token", "owner", "expires_at", "acquired_at",
            "lease_ms", "readers", "shared_until", "epoch", "waiter", "waiter_until");
    /** PostgreSQL only: until when someone may be waiting for a notification of the name's release. */
    static final String WANTED_COLUMN = "wanted_until";
    static final List<String> SHARED_COLUMNS = List.of("name_key", "owner", "epoch", "token", "expires_at", "acquired_at", "lease_ms");
    static final List<String> LINE_COLUMNS = List.of("name_key", "owner", "ticket", "writer", "expires_at");
    /** The ticket of a try that is not in the name's line: it comes after everyone who is. */
    static final long NOT_IN_LINE = Long.MAX_VALUE;

    /** What one try got. */
    sealed interface Outcome permits Granted, Busy {}

    /** A grant: its fencing token, and for shared holders the epoch they joined. */
    record Granted(long token, long epoch) implements Outcome {}

    /** Held by someone else, or a queued writer goes first. */
    enum Busy implements Outcome { BUSY }

    /** One holder or the queued writer, with times measured by the database relative to its now. */
    record Holder(Mode mode, String owner, long token, long leftMs, long ageMs, long leaseMs, boolean waiting) {}

    /** What the table says about one name: its holders, the writer queued first, and the waiting line in order. */
    record State(String name, long lastToken, List<Holder> holders, Optional<Holder> waiter, List<Holder> line) {}

    /** Why a renewal failed (seed 003's table: wrong owner, expired, not found). */
    record Lost(String why) {}

    @FunctionalInterface
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    final String description;
    final Dialect dialect;
    final String table;
    final String shared;
    /** The waiting line: one row per waiter, in ticket order (see {@link #lineClear}). */
    final String line;
    final String channel;
    private final Connections connections;
    private final SqlFailures failures;
    /** For the errors of a table that is not as it should be. */
    private final BackendFailures refusals;
    private final int queryTimeoutSeconds;
    /** PostgreSQL: the statement time limit in ms, enforced by {@link #canceller}; 0 elsewhere. */
    private final long cancelAfterMs;
    /** PostgreSQL: cancels statements that outrun their limit (see {@link #query}); started at the first statement. */
    private volatile ScheduledThreadPoolExecutor canceller;
    /** Set by {@link #close}; guarded by this. */
    private boolean stopped;
    private final boolean postgres;
    private final String now;

    // Statements, built once from the dialect.
    private final String exAcquire;
    private final String exInsert;
    private final String shJoin;
    private final String shInsertLock;
    private final String shInsertHolder;
    private final String shCleanup;
    private final String exRenew;
    private final String shRenewLock;
    private final String shRenewHolder;
    private final String exRelease;
    private final String shReleaseLock;
    private final String shReleaseHolder;
    private final String queue;
    private final String unqueue;
    private final String inspectLock;
    private final String inspectShared;
    private final String listLocks;
    private final String listShared;
    private final String holderEpoch;
    private final String lineRenew;
    private final String lineLastTicket;
    private final String lineInsert;
    private final String linePurge;
    private final String lineLeave;
    private final String lineAheadOfWriter;
    private final String lineAheadOfReader;
    private final String inspectLine;
    private final String listLine;

    // PostgreSQL's one-statement forms, built once (see the methods that run them).
    private final String pgExclusiveSql;
    private final String pgSharedSql;
    private final String pgRenewSharedSql;
    private final String pgReleaseSharedSql;
    private final String pgExReleaseSql;
    private final String pgUnqueueSql;
    private final String pgMarkWriterSql;
    private final String pgMarkReaderSql;

    LockStore(String description, Dialect dialect, String table, Connections connections, Duration statementTimeout, Secrets secrets) {
        this.description = description;
        this.dialect = dialect;
        this.table = TableName.validate(table);
        this.shared = table + "_shared";
        this.line = table + "_queue";
        this.channel = ("interlock_" + table).toLowerCase(Locale.ROOT);
        this.connections = connections;
        this.queryTimeoutSeconds = (int) Math.max(1, (statementTimeout.toMillis() + 999) / 1000);
        this.failures = new SqlFailures(description, dialect, table, statementTimeout.toMillis(), secrets);
        this.refusals = new BackendFailures(description);
        this.postgres = dialect instanceof Dialect.Postgres;
        this.cancelAfterMs = postgres ? Math.max(1, statementTimeout.toMillis()) : 0;
        String n = this.now = dialect.now();
        String plus = dialect.plusMillisParam(n);
        String t = this.table;
        String s = this.shared;

        // Exclusive: free (no live holder, no live reader), no other writer queued first, nobody ahead in line.
        // Params: owner, lease, lease, key, name, owner, then the line's (key, ticket, ticket, owner).
        exAcquire = "UPDATE " + t + " SET"
                + " epoch = CASE WHEN shared_until IS NOT NULL THEN epoch + 1 ELSE epoch END,"
                + " token = " + dialect.nextToken("token") + ","
                + " owner = ?, expires_at = " + plus + ", acquired_at = " + n + ", lease_ms = ?,"
                + " readers = 0, shared_until = NULL, waiter = NULL, waiter_until = NULL"
                + " WHERE name_key = ? AND name = ?"
                + " AND (owner IS NULL OR expires_at <= " + n + ")"
                + " AND (shared_until IS NULL OR shared_until <= " + n + ")"
                + " AND (waiter IS NULL OR waiter = ? OR waiter_until <= " + n + ")"
                + lineClear(true);
        // First use of a name, granted exclusively. Params: key, name, owner, lease, lease.
        exInsert = "INSERT INTO " + t + " (" + String.join(", ", LOCK_COLUMNS) + ") VALUES (?, ?, 1, ?, " + plus + ", " + n
                + ", ?, 0, NULL, 1, NULL, NULL)";
        // Shared: no live exclusive holder, no live queued writer, no writer ahead in line.
        // Params: lease, lease, key, name, then the line's (key, ticket, ticket, owner).
        shJoin = "UPDATE " + t + " SET"
                + " epoch = CASE WHEN shared_until <= " + n + " THEN epoch + 1 ELSE epoch END,"
                + " readers = CASE WHEN shared_until IS NULL OR shared_until <= " + n + " THEN 1 ELSE readers + 1 END,"
                + " shared_until = CASE WHEN shared_until IS NULL OR shared_until <= " + n + " THEN " + plus
                + " ELSE " + dialect.greatest("shared_until", plus) + " END,"
                + " token = " + dialect.nextToken("token") + ","
                + " owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                + " WHERE name_key = ? AND name = ?"
                + " AND (owner IS NULL OR expires_at <= " + n + ")"
                + " AND (waiter IS NULL OR waiter_until <= " + n + ")"
                + lineClear(false);
        // First use of a name, granted shared. Params: key, name, lease.
        shInsertLock = "INSERT INTO " + t + " (" + String.join(", ", LOCK_COLUMNS) + ") VALUES (?, ?, 1, NULL, NULL, NULL, NULL, 1, "
                + plus + ", 1, NULL, NULL)";
        // Params: key, owner, epoch, token, lease, lease.
        shInsertHolder = "INSERT INTO " + s + " (" + String.join(", ", SHARED_COLUMNS) + ") VALUES (?, ?, ?, ?, " + plus + ", " + n + ", ?)";
        // Rows of readers whose leases all ran out before this epoch began. Params: key, epoch.
        shCleanup = "DELETE FROM " + s + " WHERE name_key = ? AND epoch < ?";

        // Renewals: owner-checked, and only while the lease has not run out by the database's clock.
        String sync = postgres ? " AND set_config('synchronous_commit', 'on', true) IS NOT NULL" : "";
        // Params: lease, lease, key, owner, token.
        exRenew = "UPDATE " + t + " SET expires_at = " + plus + ", lease_ms = ? WHERE name_key = ? AND owner = ? AND token = ? AND expires_at > "
                + n + sync;
        // Params: lease, key, epoch.
        shRenewLock = "UPDATE " + t + " SET shared_until = " + dialect.greatest("shared_until", plus)
                + " WHERE name_key = ? AND epoch = ? AND shared_until > " + n + sync;
        // Params: lease, lease, key, owner, epoch.
        shRenewHolder = "UPDATE " + s + " SET expires_at = " + plus + ", lease_ms = ? WHERE name_key = ? AND owner = ? AND epoch = ? AND expires_at > " + n;

        // Releases: owner-checked; a late release never frees someone else's grant.
        exRelease = "UPDATE " + t + " SET owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL WHERE name_key = ? AND owner = ?";
        // Params: key, epoch. (shared_until before readers: MySQL assigns left to right.)
        shReleaseLock = "UPDATE " + t + " SET shared_until = CASE WHEN readers = 1 THEN NULL ELSE shared_until END, readers = readers - 1"
                + " WHERE name_key = ? AND epoch = ? AND readers > 0";
        shReleaseHolder = "DELETE FROM " + s + " WHERE name_key = ? AND owner = ? AND epoch = ?";
        holderEpoch = "SELECT epoch FROM " + s + " WHERE name_key = ? AND owner = ?";

        // The writer queued first: only the first in line takes the place. Params: owner, queue lease, key, owner,
        // then the line's (key, ticket, ticket, owner).
        queue = "UPDATE " + t + " SET waiter = ?, waiter_until = " + plus
                + " WHERE name_key = ? AND (waiter IS NULL OR waiter = ? OR waiter_until <= " + n + ")" + lineClear(true);

        // The line. Params: lease, key, owner.
        lineRenew = "UPDATE " + line + " SET expires_at = " + plus + " WHERE name_key = ? AND owner = ? AND expires_at > " + n;
        lineLastTicket = "SELECT COALESCE(MAX(ticket), 0) FROM " + line + " WHERE name_key = ?";
        // Params: key, owner, ticket, writer, lease.
        lineInsert = "INSERT INTO " + line + " (" + String.join(", ", LINE_COLUMNS) + ") VALUES (?, ?, ?, ?, " + plus + ")";
        // This waiter's own old place and the places of waiters that stopped renewing. Params: key, owner.
        linePurge = "DELETE FROM " + line + " WHERE name_key = ? AND (owner = ? OR expires_at <= " + n + ")";
        lineLeave = "DELETE FROM " + line + " WHERE name_key = ? AND owner = ?";
        String ahead = "SELECT COUNT(*) FROM " + line + " WHERE name_key = ? AND expires_at > " + n
                + " AND (ticket < ? OR (ticket = ? AND owner < ?))";
        lineAheadOfWriter = ahead;
        lineAheadOfReader = ahead + " AND writer = 1";
        String lineCols = "name_key, owner, ticket, writer, " + dialect.millisBetween(n, "expires_at") + " AS left_ms";
        inspectLine = "SELECT " + lineCols + " FROM " + line + " WHERE name_key = ? AND expires_at > " + n + " ORDER BY ticket, owner";
        listLine = "SELECT " + lineCols + " FROM " + line + " WHERE expires_at > " + n + " ORDER BY name_key, ticket, owner";
        unqueue = "UPDATE " + t + " SET waiter = NULL, waiter_until = NULL WHERE name_key = ? AND waiter = ?";

        String lockCols = "name_key, name, token, owner, epoch, readers, waiter, lease_ms,"
                + " CASE WHEN owner IS NOT NULL AND expires_at > " + n + " THEN 1 ELSE 0 END AS held,"
                + " " + dialect.millisBetween(n, "expires_at") + " AS left_ms,"
                + " " + dialect.millisBetween("acquired_at", n) + " AS age_ms,"
                + " CASE WHEN waiter IS NOT NULL AND waiter_until > " + n + " THEN 1 ELSE 0 END AS queued,"
                + " " + dialect.millisBetween(n, "waiter_until") + " AS waiter_left_ms";
        String sharedCols = "name_key, owner, epoch, token, lease_ms,"
                + " " + dialect.millisBetween(n, "expires_at") + " AS left_ms,"
                + " " + dialect.millisBetween("acquired_at", n) + " AS age_ms";
        inspectLock = "SELECT " + lockCols + " FROM " + t + " WHERE name_key = ?";
        inspectShared = "SELECT " + sharedCols + " FROM " + s + " WHERE name_key = ? AND expires_at > " + n + " ORDER BY token";
        listLocks = "SELECT " + lockCols + " FROM " + t;
        listShared = "SELECT " + sharedCols + " FROM " + s + " WHERE expires_at > " + n + " ORDER BY token";

        // PostgreSQL: the one-statement forms, built once (what each does: at the method that runs it).
        pgExclusiveSql = pgInsertHead()
                + "SELECT ?, ?, 1, ?, now() + " + pgInterval() + ", now(), ?, 0, NULL, 1, NULL, NULL"
                + " WHERE set_config('synchronous_commit', 'on', true) IS NOT NULL"
                + " ON CONFLICT (name_key) DO UPDATE SET"
                + " epoch = CASE WHEN t.shared_until IS NOT NULL THEN t.epoch + 1 ELSE t.epoch END,"
                + " token = t.token + 1, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,"
                + " acquired_at = EXCLUDED.acquired_at, lease_ms = EXCLUDED.lease_ms,"
                + " readers = 0, shared_until = NULL, waiter = NULL, waiter_until = NULL"
                + " WHERE t.name = EXCLUDED.name"
                + " AND (t.owner IS NULL OR t.expires_at <= now())"
                + " AND (t.shared_until IS NULL OR t.shared_until <= now())"
                + " AND (t.waiter IS NULL OR t.waiter = EXCLUDED.owner OR t.waiter_until <= now())"
                + lineClear(true)
                + " RETURNING t.token";
        pgSharedSql = "WITH n AS (" + pgInsertHead()
                + "SELECT ?, ?, 1, NULL, NULL, NULL, NULL, 1, now() + " + pgInterval() + ", 1, NULL, NULL"
                + " WHERE set_config('synchronous_commit', 'on', true) IS NOT NULL"
                + " ON CONFLICT (name_key) DO UPDATE SET"
                + " epoch = CASE WHEN t.shared_until <= now() THEN t.epoch + 1 ELSE t.epoch END,"
                + " readers = CASE WHEN t.shared_until IS NULL OR t.shared_until <= now() THEN 1 ELSE t.readers + 1 END,"
                + " shared_until = CASE WHEN t.shared_until IS NULL OR t.shared_until <= now() THEN EXCLUDED.shared_until"
                + " ELSE GREATEST(t.shared_until, EXCLUDED.shared_until) END,"
                + " token = t.token + 1, owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                + " WHERE t.name = EXCLUDED.name"
                + " AND (t.owner IS NULL OR t.expires_at <= now())"
                + " AND (t.waiter IS NULL OR t.waiter_until <= now())"
                + lineClear(false)
                + " RETURNING t.token, t.epoch, t.readers),"
                + " h AS (INSERT INTO " + shared + " (" + String.join(", ", SHARED_COLUMNS) + ")"
                + " SELECT CAST(? AS VARCHAR), CAST(? AS VARCHAR), n.epoch, n.token, now() + " + pgInterval() + ", now(), CAST(? AS BIGINT) FROM n),"
                + " d AS (DELETE FROM " + shared + " WHERE name_key = ? AND epoch < (SELECT epoch FROM n WHERE n.readers = 1))"
                + " SELECT token, epoch FROM n";
        pgRenewSharedSql = "WITH u AS (" + shRenewLock + " RETURNING epoch),"
                + " r AS (UPDATE " + shared + " SET expires_at = now() + " + pgInterval() + ", lease_ms = ?"
                + " WHERE name_key = ? AND owner = ? AND epoch = (SELECT epoch FROM u) AND expires_at > now() RETURNING token)"
                + " SELECT count(*) FROM r";
        // A release commits asynchronously on PostgreSQL: a release lost in a server crash only
        // keeps the lock until its lease runs out (the holder no longer renews it), and the next
        // grant's synchronous commit flushes the WAL up to it anyway. It saves each cycle one of
        // its two WAL flushes (docs/jdbc.md, "Synchronous commit").
        String async = " AND set_config('synchronous_commit', 'off', true) IS NOT NULL";
        pgReleaseSharedSql = "WITH d AS (DELETE FROM " + shared + " WHERE name_key = ? AND owner = ?" + async + " RETURNING epoch),"
                + " u AS (UPDATE " + table + " SET shared_until = CASE WHEN readers = 1 THEN NULL ELSE shared_until END,"
                + " readers = readers - 1 WHERE name_key = ? AND readers > 0 AND epoch = (SELECT epoch FROM d)"
                + " RETURNING readers, wanted_until > now() AS wanted),"
                + " w AS (SELECT pg_notify(?, ?) FROM u WHERE u.readers = 0 AND u.wanted)"
                + " SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM w)";
        pgExReleaseSql = notifying(exRelease + async);
        pgUnqueueSql = notifying(unqueue);
        String wanted = "wanted_until = GREATEST(COALESCE(wanted_until, now()), now() + " + pgInterval() + ")";
        String freeOfHolder = "(owner IS NULL OR expires_at <= now())";
        String mayQueue = "((waiter IS NULL OR waiter = ? OR waiter_until <= now())" + lineClear(true) + ")";
        // Params: lease, owner, line (key, ticket, ticket, owner), owner, owner, line (...), lease, key, owner.
        pgMarkWriterSql = "UPDATE " + t + " SET " + wanted + ","
                + " waiter = CASE WHEN " + mayQueue + " THEN CAST(? AS VARCHAR) ELSE waiter END,"
                + " waiter_until = CASE WHEN " + mayQueue + " THEN now() + " + pgInterval() + " ELSE waiter_until END"
                + " WHERE name_key = ?"
                + " RETURNING waiter = ?, " + freeOfHolder + " AND (shared_until IS NULL OR shared_until <= now())";
        // Params: lease, key.
        pgMarkReaderSql = "UPDATE " + t + " SET " + wanted + " WHERE name_key = ?"
                + " RETURNING FALSE, " + freeOfHolder + " AND (waiter IS NULL OR waiter_until <= now())";
    }

    /**
     * The line's rule, as the last term of a WHERE clause: no live place in the name's line comes
     * before this waiter's ticket ({@link #NOT_IN_LINE} for a try that is not in line: after
     * everyone), ties going by owner id; for a reader, no such writer's place. Params: key,
     * ticket, ticket, owner.
     *
     * <p>This reads rows other than the one the statement changes, so under READ COMMITTED it may
     * decide on a line a moment old: a place that was just taken may not count yet. That costs
     * order at most, never exclusion, which the lock row's own terms decide (§ "Why it is safe").
     */
    private String lineClear(boolean writer) {
        return " AND NOT EXISTS (SELECT 1 FROM " + line + " q WHERE q.name_key = ? AND q.expires_at > " + now
                + " AND (q.ticket < ? OR (q.ticket = ? AND q.owner < ?))" + (writer ? "" : " AND q.writer = 1") + ")";
    }

    // ================================================================================ plumbing

    private PreparedStatement prepare(Connection c, String sql) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        if (cancelAfterMs == 0) {
            ps.setQueryTimeout(queryTimeoutSeconds);
        }
        return ps;
    }

    private PreparedStatement prepareForKeys(Connection c, String sql) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS);
        if (cancelAfterMs == 0) {
            ps.setQueryTimeout(queryTimeoutSeconds);
        }
        return ps;
    }

    /*
     * The statement time limit on PostgreSQL. pgjdbc's setQueryTimeout schedules a cancel on a
     * java.util.Timer of its own for every statement and takes it back after; the new task is
     * always that timer's earliest, so every statement woke the timer's thread (strace: ~6 futex
     * calls per one-thread acquire + release cycle of two statements, against ~0.7 for the raw
     * floor; ~17 us of the cycle). The same cancel (Statement.cancel(), which is all pgjdbc's
     * timeout does) comes from a PacedTimer, so scheduling and withdrawing it wakes nobody.
     * pgjdbc's cancel() is safe against a statement that has just ended: it cancels only a
     * statement still running, and the statement waits for a cancel under way before it returns.
     * The other drivers' query timeouts run on the server (MariaDB, H2) or in the statement
     * itself (SQLite) and keep setQueryTimeout.
     */

    private ResultSet query(PreparedStatement ps) throws SQLException {
        ScheduledFuture<?> limit = limit(ps);
        try {
            return ps.executeQuery();
        } finally {
            withdraw(limit);
        }
    }

    private int exec(PreparedStatement ps) throws SQLException {
        ScheduledFuture<?> limit = limit(ps);
        try {
            return ps.executeUpdate();
        } finally {
            withdraw(limit);
        }
    }

    private ScheduledFuture<?> limit(PreparedStatement ps) {
        if (cancelAfterMs == 0) {
            return null;
        }
        try {
            return canceller().schedule(() -> cancel(ps), cancelAfterMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return null; // closed: the network timeout still bounds the call
        }
    }

    private static void withdraw(ScheduledFuture<?> limit) {
        if (limit != null) {
            limit.cancel(false);
        }
    }

    private void cancel(PreparedStatement ps) {
        try {
            log.debug("{} - a statement ran past {} ms: cancelling it", description, cancelAfterMs);
            ps.cancel();
        } catch (SQLException | RuntimeException e) {
            log.debug("{} - cancelling a statement failed: {}", description, e.toString());
        }
    }

    private ScheduledThreadPoolExecutor canceller() {
        ScheduledThreadPoolExecutor e = canceller;
        if (e == null) {
            synchronized (this) {
                e = canceller;
                if (e == null) {
                    if (stopped) {
                        throw new java.util.concurrent.RejectedExecutionException("closed");
                    }
                    e = canceller = PacedTimer.create(r -> {
                        Thread t = new Thread(r, "interlock-jdbc-timeout");
                        t.setDaemon(true);
                        return t;
                    });
                }
            }
        }
        return e;
    }

    /** Stops the statement timer, if it was started. */
    void close() {
        ScheduledThreadPoolExecutor e;
        synchronized (this) {
            stopped = true;
            e = canceller;
            canceller = null;
        }
        if (e != null) {
            e.shutdownNow();
        }
    }

    private static void bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            Object p = params[i];
            if (p instanceof Long) {
                ps.setLong(i + 1, (Long) p);
            } else {
                ps.setString(i + 1, (String) p);
            }
        }
    }

    private int update(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql)) {
            bind(ps, params);
            return exec(ps);
        }
    }

    /**
     * Runs {@code work} on a borrowed connection. A deadlock or serialization failure is retried
     * (the transaction was rolled back whole); a broken connection is thrown away, and if
     * {@code idempotent} the work runs once more on another connection, since a pooled connection
     * may have died while idle (a restarted server).
     */
    <T> T call(String what, String name, boolean idempotent, Work<T> work) {
        SQLException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            Connections.Borrowed b;
            try {
                b = connections.borrow();
            } catch (SQLException e) {
                throw failures.map(what, name, e);
            }
            try {
                T result = work.run(b.connection);
                b.giveBack(false);
                return result;
            } catch (SQLException e) {
                last = e;
                boolean broken = dialect.isConnectionError(e) || isClosed(b.connection);
                b.giveBack(true);
                if (broken && connections instanceof Connections.FromUrl) {
                    ((Connections.FromUrl) connections).dropIdle();
                }
                boolean again = dialect.isRetryable(e) || (broken && idempotent && attempt == 0);
                if (!again) {
                    throw failures.map(what, name, e);
                }
                log.debug("{} - {} '{}' failed, trying again: {}", description, what, name, e.getMessage());
            } catch (RuntimeException | Error e) {
                b.giveBack(true);
                throw e;
            }
        }
        throw failures.map(what, name, last);
    }

    private static boolean isClosed(Connection c) {
        try {
            return c.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    /** Runs {@code work} in one transaction on {@code c}, which is back in autocommit mode afterwards. */
    private static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        c.setAutoCommit(false);
        boolean done = false;
        try {
            T r = work.run(c);
            c.commit();
            done = true;
            return r;
        } finally {
            if (!done) {
                try {
                    c.rollback();
                } catch (SQLException e) {
                    // the connection is thrown away by call()
                }
            }
            c.setAutoCommit(true);
        }
    }

    /** Thrown inside a transaction to roll it back and give a result. */
    private static final class Rollback extends SQLException {
        private static final long serialVersionUID = 1L;
        final transient Object result;

        Rollback(Object result) {
            super("rollback", null, 0, null);
            this.result = result;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T rolledBack(Connection c, Work<T> work) throws SQLException {
        try {
            return inTransaction(c, work);
        } catch (Rollback r) {
            return (T) r.result;
        }
    }

    // ================================================================================ table

    /**
     * Checks that both tables exist with every column this store uses, creating them first if
     * {@code create}.
     *
     * @throws LockBackendException naming the missing table or columns
     */
    void checkTables(boolean create) {
        checkTables(create, false);
    }

    /**
     * Checks that the lock tables exist with the expected columns, creating them first if
     * {@code create}.
     *
     * @param deferred the URL asks for creation, but the space was opened only to read
     *     ({@link dev.interlock.Interlock#CREATE_NOTHING}): a missing table is named as not created yet
     */
    void checkTables(boolean create, boolean deferred) {
        call("opening the lock table", null, true, c -> {
            if (create) {
                for (String ddl : dialect.ddl(table, shared, line)) {
                    try (Statement st = c.createStatement()) {
                        st.setQueryTimeout(queryTimeoutSeconds);
                        st.execute(ddl);
                    } catch (SQLException e) {
                        // Another process creating the same table at the same moment: PostgreSQL's IF NOT
                        // EXISTS is not safe against a concurrent CREATE and reports a duplicate key in its
                        // catalog (23505), a duplicate table (42P07) or a duplicate type (42710, "type ...
                        // already exists"). Fine if the table is there now, checked below.
                        String state = e.getSQLState();
                        if (!dialect.isDuplicateKey(e) && !"42P07".equals(state) && !"42710".equals(state)) {
                            throw e;
                        }
                    }
                }
            }
            List<String> lockColumns = new ArrayList<>(LOCK_COLUMNS);
            if (postgres) {
                lockColumns.add(WANTED_COLUMN);
            }
            checkShape(c, table, lockColumns, create, deferred);
            checkShape(c, shared, SHARED_COLUMNS, create, deferred);
            checkShape(c, line, LINE_COLUMNS, create, deferred);
            return null;
        });
    }

    private void checkShape(Connection c, String name, List<String> wanted, boolean created, boolean deferred) throws SQLException {
        Set<String> have = new HashSet<>();
        int nameWidth = -1;
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(queryTimeoutSeconds);
            try (ResultSet rs = st.executeQuery("SELECT * FROM " + name + " WHERE 1 = 0")) {
                ResultSetMetaData md = rs.getMetaData();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    String col = md.getColumnName(i).toLowerCase(Locale.ROOT);
                    have.add(col);
                    if (col.equals("name") && name.equals(table)) {
                        nameWidth = md.getPrecision(i);
                    }
                }
            }
        } catch (SQLException e) {
            if (dialect.isMissingTable(e) && name.equals(line) && !created && !deferred) {
                // The lock table itself was found (it is checked first): it comes from before the line.
                throw refusals.refused(null, "the lock table " + table
                        + " was created by an earlier Interlock and has no waiting line " + line + "; create it with the DDL for "
                        + dialect.product() + " in docs/jdbc.md, or add ?create=true to the URL", e);
            }
            if (dialect.isMissingTable(e) && deferred) {
                throw refusals.refused(null, "no lock table " + name
                        + " (nothing was created: reading creates nothing; with ?create=true the first lock creates it)", e);
            }
            if (dialect.isMissingTable(e)) {
                throw refusals.refused(null, "the lock table " + name
                        + " does not exist" + (created ? " although it was just created" : "")
                        + "; create it with the DDL for " + dialect.product() + " in docs/jdbc.md, or add ?create=true to the URL ("
                        + failures.driverText(e) + ")", e);
            }
            throw e;
        }
        List<String> missing = new ArrayList<>();
        for (String w : wanted) {
            if (!have.contains(w)) {
                missing.add(w);
            }
        }
        if (missing.equals(List.of(WANTED_COLUMN))) {
            throw refusals.refused(null, "the lock table " + name
                    + " was created by an earlier Interlock and lacks the column " + WANTED_COLUMN + "; add it with: ALTER TABLE " + name
                    + " ADD COLUMN " + WANTED_COLUMN + " TIMESTAMPTZ", null);
        }
        if (!missing.isEmpty()) {
            throw refusals.refused(null, "the table " + name
                    + " is not an Interlock lock table: it lacks the columns " + String.join(", ", missing)
                    + "; use another table name (?table=...) or create it with the DDL in docs/jdbc.md", null);
        }
        if (nameWidth > 0 && nameWidth < 1024) {
            throw refusals.refused(null, "the column " + table
                    + ".name holds " + nameWidth + " characters; lock names may be 1024 long: widen it (see docs/jdbc.md)", null);
        }
    }

    // ================================================================================ acquire

    /**
     * One try, never waiting for a conflicting holder. A grant is committed (synchronously, on
     * PostgreSQL) before it is returned.
     */
    Outcome tryAcquire(String name, Mode mode, String owner, Duration lease, long ticket) {
        String key = NameKey.of(name);
        long ms = lease.toMillis();
        Work<Outcome> attempt = mode == Mode.EXCLUSIVE ? c -> tryExclusive(c, key, name, owner, ms, ticket)
                : c -> tryShared(c, key, name, owner, ms, ticket);
        Work<Outcome> work = ticket == NOT_IN_LINE ? attempt : c -> {
            Outcome o = attempt.run(c);
            if (o instanceof Granted) {
                update(c, lineLeave, key, owner); // served: its place goes (else it expires by itself)
            }
            return o;
        };
        try {
            return call("acquiring", name, false, work);
        } catch (LockBackendException e) {
            if (!e.isTransient()) {
                throw e;
            }
            // The reply may have been lost after the grant committed: undo whatever this owner (unique to
            // this acquisition) may hold, so that a failure reported here never leaves the lock taken.
            try {
                abandon(name, owner);
            } catch (LockBackendException again) {
                e.addSuppressed(again);
                throw e;
            }
            // The state is now as if the failed try never happened: try once more on a fresh connection.
            return call("acquiring", name, false, work);
        }
    }

    private Outcome tryExclusive(Connection c, String key, String name, String owner, long ms, long ticket) throws SQLException {
        if (postgres) {
            return pgExclusive(c, key, name, owner, ms, ticket);
        }
        for (int round = 0; round < 2; round++) {
            long token = updateReturningToken(c, key, exAcquire, owner, ms, ms, key, name, owner, key, ticket, ticket, owner);
            if (token > 0) {
                return new Granted(token, 0);
            }
            try {
                update(c, exInsert, key, name, owner, ms, ms);
                return new Granted(1, 0);
            } catch (SQLException e) {
                if (!dialect.isDuplicateKey(e)) {
                    throw e;
                }
                // Created by someone else since our update: look again.
            }
        }
        return Busy.BUSY;
    }

    /** Runs a grant UPDATE and returns the new token, or 0 if the row did not match. */
    private long updateReturningToken(Connection c, String key, String update, Object... params) throws SQLException {
        String q = dialect.updateReturning(update, "token");
        if (q != null) {
            try (PreparedStatement ps = prepare(c, q)) {
                bind(ps, params);
                try (ResultSet rs = query(ps)) {
                    return rs.next() ? rs.getLong(1) : 0;
                }
            }
        }
        // MySQL/MariaDB: token = LAST_INSERT_ID(token + 1) reports the new token with the update's result.
        try (PreparedStatement ps = prepareForKeys(c, update)) {
            bind(ps, params);
            if (exec(ps) == 0) {
                return 0;
            }
            try (ResultSet rs = ps.getGeneratedKeys()) {
                if (rs.next() && rs.getLong(1) > 0) {
                    return rs.getLong(1);
                }
            }
        }
        // A read-back here could see a later holder's token: refuse rather than guess.
        throw new SQLException("the driver did not report LAST_INSERT_ID() with the update's result; use MariaDB Connector/J or MySQL Connector/J");
    }

    private Outcome tryShared(Connection c, String key, String name, String owner, long ms, long ticket) throws SQLException {
        if (postgres) {
            return pgShared(c, key, name, owner, ms, ticket);
        }
        for (int round = 0; round < 2; round++) {
            try {
                Outcome o = rolledBack(c, tx -> {
                    long[] got = joinShared(tx, key, name, owner, ms, ticket);
                    if (got == null) {
                        throw new Rollback(Busy.BUSY);
                    }
                    update(tx, shInsertHolder, key, owner, got[1], got[0], ms, ms);
                    if (got[2] == 1 && got[1] > 1) {
                        update(tx, shCleanup, key, got[1]);
                    }
                    return new Granted(got[0], got[1]);
                });
                if (o != null) {
                    return o;
                }
            } catch (SQLException e) {
                if (!dialect.isDuplicateKey(e)) {
                    throw e;
                }
            }
        }
        return Busy.BUSY;
    }

    /**
     * In a transaction: joins the readers of the name's row, creating the row if it is new.
     * Returns {token, epoch, readers} or null if busy. Returns null from the transaction (rolled
     * back by the caller's retry) when another process created the row first.
     */
    private long[] joinShared(Connection c, String key, String name, String owner, long ms, long ticket) throws SQLException {
        String q = dialect.updateReturning(shJoin, "token, epoch, readers");
        if (q != null) {
            try (PreparedStatement ps = prepare(c, q)) {
                bind(ps, ms, ms, key, name, key, ticket, ticket, owner);
                try (ResultSet rs = query(ps)) {
                    if (rs.next()) {
                        return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
                    }
                }
            }
        } else if (update(c, shJoin, ms, ms, key, name, key, ticket, ticket, owner) == 1) {
            try (PreparedStatement ps = prepare(c, "SELECT token, epoch, readers FROM " + table + " WHERE name_key = ?")) {
                bind(ps, key);
                try (ResultSet rs = query(ps)) {
                    rs.next();
                    return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
                }
            }
        }
        if (exists(c, key)) {
            return null;
        }
        update(c, shInsertLock, key, name, ms); // a duplicate key here is retried by tryShared
        return new long[] {1, 1, 1};
    }

    private boolean exists(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = prepare(c, "SELECT 1 FROM " + table + " WHERE name_key = ?")) {
            bind(ps, key);
            try (ResultSet rs = query(ps)) {
                return rs.next();
            }
        }
    }

    // ---------------------------------------------------------------- PostgreSQL: one statement each

    private String pgInterval() {
        return "make_interval(secs => CAST(? AS double precision) / 1000)";
    }

    private String pgInsertHead() {
        return "INSERT INTO " + table + " AS t (" + String.join(", ", LOCK_COLUMNS) + ") ";
    }

    /**
     * {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE <free> RETURNING token}: creates the row or
     * takes it, in one statement and one round trip. {@code set_config(..., true)} makes this
     * transaction commit synchronously whatever the session or server says, so a grant reported
     * here survives a crash of the server.
     */
    private Outcome pgExclusive(Connection c, String key, String name, String owner, long ms, long ticket) throws SQLException {
        try (PreparedStatement ps = prepare(c, pgExclusiveSql)) {
            bind(ps, key, name, owner, ms, ms, key, ticket, ticket, owner);
            try (ResultSet rs = query(ps)) {
                return rs.next() ? new Granted(rs.getLong(1), 0) : Busy.BUSY;
            }
        }
    }

    /** The shared join, the holder's row and the cleanup of dead readers' rows, in one statement. */
    private Outcome pgShared(Connection c, String key, String name, String owner, long ms, long ticket) throws SQLException {
        try (PreparedStatement ps = prepare(c, pgSharedSql)) {
            bind(ps, key, name, ms, key, ticket, ticket, owner, key, owner, ms, ms, key);
            try (ResultSet rs = query(ps)) {
                return rs.next() ? new Granted(rs.getLong(1), rs.getLong(2)) : Busy.BUSY;
            }
        }
    }

    // ================================================================================ the writer's queue

    /**
     * Puts {@code owner} first in the name's writer queue (one place) for {@code lease}, or renews
     * its place. While the place is live, no reader joins and no other writer is granted.
     *
     * @return true if the place is ours
     */
    boolean queueWriter(String name, String owner, Duration lease) {
        return queueWriter(name, owner, lease, NOT_IN_LINE);
    }

    /** As {@link #queueWriter(String, String, Duration)}, for the holder of {@code ticket} in the name's line: only the first in line gets the place. */
    boolean queueWriter(String name, String owner, Duration lease, long ticket) {
        String key = NameKey.of(name);
        return call("queueing for", name, true, c -> update(c, queue, owner, lease.toMillis(), key, owner, key, ticket, ticket, owner) == 1);
    }

    /** What {@link #markWaiting} found: whether the writer-queue place is ours, whether the lock looked free. */
    record Mark(boolean queued, boolean free) {}

    /**
     * PostgreSQL: says that {@code owner} waits for {@code name} until {@code lease} from now, so
     * that releases notify (they do not while nobody waits: PostgreSQL serialises the commits of
     * all notifying transactions); for a writer, also takes or renews the name's writer-queue place.
     * One statement. If the lock looked free when the mark was written, the caller tries again at
     * once: a release that committed before the mark did not notify, and one after it will.
     */
    Mark markWaiting(String name, Mode mode, String owner, Duration lease, long ticket) {
        String key = NameKey.of(name);
        long ms = lease.toMillis();
        return call("queueing for", name, true, c -> {
            String sql;
            Object[] params;
            if (mode == Mode.EXCLUSIVE) {
                sql = pgMarkWriterSql;
                params = new Object[] {ms, owner, key, ticket, ticket, owner, owner, owner, key, ticket, ticket, owner, ms, key, owner};
            } else {
                sql = pgMarkReaderSql;
                params = new Object[] {ms, key};
            }
            try (PreparedStatement ps = prepare(c, sql)) {
                bind(ps, params);
                try (ResultSet rs = query(ps)) {
                    return rs.next() ? new Mark(rs.getBoolean(1), rs.getBoolean(2)) : new Mark(false, true);
                }
            }
        });
    }

    /** Gives up {@code owner}'s place in the writer queue, if it has it. */
    void leaveQueue(String name, String owner) {
        String key = NameKey.of(name);
        call("leaving the queue of", name, true, c -> postgres ? pgNotifying(c, pgUnqueueSql, key, owner) : update(c, unqueue, key, owner));
    }

    // ================================================================================ the line

    /** Where a waiter stands in the name's line: its ticket, and how many live places before it can hold it up. */
    record Place(long ticket, int ahead) {}

    /**
     * Keeps {@code owner}'s place in the name's line for {@code lease} from the database's now:
     * renews it while it is live, else (the first wait, or a place that ran out while the waiter
     * was stopped) takes a new one at the end, after clearing the places that ran out. Also counts
     * the live places before it (for a reader, the writers' places), so that a waiter further
     * back need not try at every release.
     *
     * @param ticket the place this waiter had, or {@link #NOT_IN_LINE}
     */
    Place keepInLine(String name, Mode mode, String owner, long ticket, Duration lease) {
        String key = NameKey.of(name);
        long ms = lease.toMillis();
        return call("waiting in line for", name, true, c -> {
            long t = ticket;
            if (t == NOT_IN_LINE || update(c, lineRenew, ms, key, owner) != 1) {
                update(c, linePurge, key, owner);
                t = lastTicket(c, key) + 1;
                update(c, lineInsert, key, owner, t, mode == Mode.EXCLUSIVE ? 1L : 0L, ms);
            }
            try (PreparedStatement ps = prepare(c, mode == Mode.EXCLUSIVE ? lineAheadOfWriter : lineAheadOfReader)) {
                bind(ps, key, t, t, owner);
                try (ResultSet rs = query(ps)) {
                    rs.next();
                    return new Place(t, rs.getInt(1));
                }
            }
        });
    }

    /**
     * The last ticket handed out among the places still in the line. Two waiters that read it at
     * the same moment get the same ticket and are ordered by owner id: they arrived together.
     */
    private long lastTicket(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = prepare(c, lineLastTicket)) {
            bind(ps, key);
            try (ResultSet rs = query(ps)) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    /** Gives up {@code owner}'s place in the name's line; on PostgreSQL the waiters behind it are notified, as by a release. */
    void leaveLine(String name, String owner) {
        String key = NameKey.of(name);
        call("leaving the line of", name, true, c -> {
            if (postgres) {
                try (PreparedStatement ps = prepare(c, lineLeave + " AND pg_notify(?, name_key) IS NOT NULL")) {
                    bind(ps, key, owner, channel);
                    return exec(ps);
                }
            }
            return update(c, lineLeave, key, owner);
        });
    }

    /**
     * {@code update} (of one lock row, params key and owner) made to notify the name's waiters, if
     * any (param: the channel). The notice is the last WHERE term, reached only while the row is
     * wanted and, as PostgreSQL orders a filter's terms by cost, after the owner check. Should a
     * notice ever go out for a row that the statement then does not change (a plan that checks
     * the owner later, a re-check after a concurrent change), it only wakes a waiter to try in
     * vain. A plain UPDATE gives the driver no rows to read: 3-4 us less per release than the
     * data-modifying WITH that counted them (docs/benchmarks.md).
     */
    private static String notifying(String update) {
        return update + " AND (wanted_until IS NULL OR wanted_until <= now() OR pg_notify(?, name_key) IS NOT NULL)";
    }

    /**
     * Runs {@link #notifying an UPDATE of one lock row that notifies} the name's waiters if it
     * changed the row and someone waits for the name ({@code wanted_until} is live).
     *
     * @return the rows changed (0 or 1)
     */
    private int pgNotifying(Connection c, String sql, String key, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql)) {
            bind(ps, key, owner, channel);
            return exec(ps);
        }
    }

    // ================================================================================ renew, release, break

    /**
     * Extends a grant to {@code lease} from the database's now, if it is still this owner's and its
     * lease has not run out.
     *
     * @return empty if renewed, else why not
     */
    Optional<Lost> renew(String name, Mode mode, String owner, long token, long epoch, Duration lease) {
        String key = NameKey.of(name);
        long ms = lease.toMillis();
        boolean ok = call("renewing", name, true, c -> {
            if (mode == Mode.EXCLUSIVE) {
                return update(c, exRenew, ms, ms, key, owner, token) == 1;
            }
            if (postgres) {
                try (PreparedStatement ps = prepare(c, pgRenewSharedSql)) {
                    bind(ps, ms, key, epoch, ms, ms, key, owner);
                    try (ResultSet rs = query(ps)) {
                        return rs.next() && rs.getLong(1) == 1;
                    }
                }
            }
            return rolledBack(c, tx -> {
                if (update(tx, shRenewLock, ms, key, epoch) != 1 || update(tx, shRenewHolder, ms, ms, key, owner, epoch) != 1) {
                    throw new Rollback(false);
                }
                return true;
            });
        });
        return ok ? Optional.empty() : Optional.of(new Lost(whyLost(name, key, mode, owner, token, epoch)));
    }

    /** Seed 003's error table, from a fresh look at the row: wrong owner, expired, or not found. */
    private String whyLost(String name, String key, Mode mode, String owner, long token, long epoch) {
        try {
            return call("inspecting", name, true, c -> {
                if (mode == Mode.EXCLUSIVE) {
                    try (PreparedStatement ps = prepare(c, inspectLock)) {
                        bind(ps, key);
                        try (ResultSet rs = query(ps)) {
                            if (!rs.next()) {
                                return "its row is gone from " + table + " (deleted by hand?)";
                            }
                            String o = rs.getString("owner");
                            if (owner.equals(o)) {
                                return "its lease ran out " + -rs.getLong("left_ms") + "ms ago by the database's clock before it was renewed";
                            }
                            long now = rs.getLong("token");
                            return now > token ? "it was taken over after its lease ran out (token " + now + " is newer)"
                                    : "it was broken or released (the row no longer names this owner)";
                        }
                    }
                }
                try (PreparedStatement ps = prepare(c, "SELECT t.epoch, " + dialect.millisBetween(now, "s.expires_at") + " FROM " + shared
                        + " s JOIN " + table + " t ON t.name_key = s.name_key WHERE s.name_key = ? AND s.owner = ?")) {
                    bind(ps, key, owner);
                    try (ResultSet rs = query(ps)) {
                        if (!rs.next()) {
                            return "its shared hold was broken or released (no row for this owner in " + shared + ")";
                        }
                        if (rs.getLong(1) != epoch) {
                            return "the leases of all its readers ran out and the lock was taken over";
                        }
                        return "its lease ran out " + -rs.getLong(2) + "ms ago by the database's clock before it was renewed";
                    }
                }
            });
        } catch (LockBackendException e) {
            return "the database no longer has it for this owner";
        }
    }

    /**
     * Releases the grant if it is still this owner's; does nothing otherwise (a late release never
     * frees someone else's lock).
     *
     * @return true if something was released
     */
    boolean release(String name, Mode mode, String owner, long epoch) {
        String key = NameKey.of(name);
        return call("releasing", name, true, c -> mode == Mode.EXCLUSIVE ? releaseExclusive(c, key, owner) : releaseShared(c, key, owner, epoch));
    }

    private boolean releaseExclusive(Connection c, String key, String owner) throws SQLException {
        return (postgres ? pgNotifying(c, pgExReleaseSql, key, owner) : update(c, exRelease, key, owner)) == 1;
    }

    private boolean releaseShared(Connection c, String key, String owner, long epoch) throws SQLException {
        if (postgres) {
            // The holder's row first: whoever deletes it (release or break) is the one who counts it out.
            try (PreparedStatement ps = prepare(c, pgReleaseSharedSql)) {
                bind(ps, key, owner, key, channel, key);
                try (ResultSet rs = query(ps)) {
                    return rs.next() && rs.getLong(1) > 0;
                }
            }
        }
        // The lock row first (as every other transaction here), then the holder's row; if that row was
        // already gone (broken), the count is put back by the rollback.
        return rolledBack(c, tx -> {
            update(tx, shReleaseLock, key, epoch);
            if (update(tx, shReleaseHolder, key, owner, epoch) != 1) {
                throw new Rollback(false);
            }
            return true;
        });
    }

    /** Best effort after an acquire whose outcome is unknown: releases whatever {@code owner} holds on the name. */
    void abandon(String name, String owner) {
        String key = NameKey.of(name);
        call("cleaning up after a failed acquire of", name, true, c -> {
            releaseExclusive(c, key, owner);
            Long epoch = sharedEpoch(c, key, owner);
            if (epoch != null) {
                releaseShared(c, key, owner, epoch);
            }
            return null;
        });
    }

    private Long sharedEpoch(Connection c, String key, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, holderEpoch)) {
            bind(ps, key, owner);
            try (ResultSet rs = query(ps)) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    /**
     * Removes {@code owner}'s hold on {@code name}, exclusive or shared, whether or not its lease
     * ran out; nobody else's.
     *
     * @return true if that owner held it
     */
    boolean breakLock(String name, String owner) {
        String key = NameKey.of(name);
        return call("breaking", name, true, c -> {
            if (releaseExclusive(c, key, owner)) {
                return true;
            }
            Long epoch = sharedEpoch(c, key, owner);
            return epoch != null && releaseShared(c, key, owner, epoch);
        });
    }

    // ================================================================================ inspect

    /** The name's holders and queued writer; empty if the name was never used. Changes nothing. */
    Optional<State> inspect(String name) {
        String key = NameKey.of(name);
        return call("inspecting", name, true, c -> {
            Map<String, List<Holder>> readers = new HashMap<>();
            Map<String, Long> epochs = new HashMap<>();
            State s;
            try (PreparedStatement ps = prepare(c, inspectLock)) {
                bind(ps, key);
                try (ResultSet rs = query(ps)) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    s = state(rs, epochs);
                }
            }
            if (!s.name().equals(name)) {
                throw refusals.refused(name, "the row with key " + key + " in " + table
                        + " names " + s.name() + ", not the name it was asked for: the table was changed by hand", null);
            }
            try (PreparedStatement ps = prepare(c, inspectShared)) {
                bind(ps, key);
                try (ResultSet rs = query(ps)) {
                    readHolders(rs, readers, epochs);
                }
            }
            Map<String, List<Holder>> line = new HashMap<>();
            try (PreparedStatement ps = prepare(c, inspectLine)) {
                bind(ps, key);
                try (ResultSet rs = query(ps)) {
                    readLine(rs, line);
                }
            }
            return Optional.of(withReaders(s, readers.getOrDefault(key, List.of()), line.getOrDefault(key, List.of())));
        });
    }

    /** Every name with a row, sorted by name. */
    List<State> list() {
        return call("listing", null, true, c -> {
            Map<String, List<Holder>> readers = new HashMap<>();
            Map<String, Long> epochs = new HashMap<>();
            Map<String, State> states = new HashMap<>();
            try (PreparedStatement ps = prepare(c, listLocks); ResultSet rs = query(ps)) {
                while (rs.next()) {
                    states.put(rs.getString("name_key"), state(rs, epochs));
                }
            }
            try (PreparedStatement ps = prepare(c, listShared); ResultSet rs = query(ps)) {
                readHolders(rs, readers, epochs);
            }
            Map<String, List<Holder>> line = new HashMap<>();
            try (PreparedStatement ps = prepare(c, listLine); ResultSet rs = query(ps)) {
                readLine(rs, line);
            }
            List<State> out = new ArrayList<>();
            states.forEach((k, s) -> out.add(withReaders(s, readers.getOrDefault(k, List.of()), line.getOrDefault(k, List.of()))));
            out.sort((a, b) -> a.name().compareTo(b.name()));
            return out;
        });
    }

    private static State state(ResultSet rs, Map<String, Long> epochs) throws SQLException {
        epochs.put(rs.getString("name_key"), rs.getLong("epoch"));
        List<Holder> holders = new ArrayList<>();
        long token = rs.getLong("token");
        if (rs.getInt("held") == 1) {
            holders.add(new Holder(Mode.EXCLUSIVE, rs.getString("owner"), token, rs.getLong("left_ms"), rs.getLong("age_ms"),
                    rs.getLong("lease_ms"), false));
        }
        Optional<Holder> waiter = Optional.empty();
        if (rs.getInt("queued") == 1) {
            waiter = Optional.of(new Holder(Mode.EXCLUSIVE, rs.getString("waiter"), 0, rs.getLong("waiter_left_ms"), -1, -1, true));
        }
        return new State(rs.getString("name"), token, holders, waiter, List.of());
    }

    /** Reads live shared holders, keeping those of their name's current epoch (the others are dead). */
    private static void readHolders(ResultSet rs, Map<String, List<Holder>> readers, Map<String, Long> epochs) throws SQLException {
        while (rs.next()) {
            String k = rs.getString("name_key");
            Long e = epochs.get(k);
            if (e != null && e == rs.getLong("epoch")) {
                readers.computeIfAbsent(k, x -> new ArrayList<>()).add(new Holder(Mode.SHARED, rs.getString("owner"), rs.getLong("token"),
                        rs.getLong("left_ms"), rs.getLong("age_ms"), rs.getLong("lease_ms"), false));
            }
        }
    }

    private static State withReaders(State s, List<Holder> readers, List<Holder> line) {
        if (readers.isEmpty() && line.isEmpty()) {
            return s;
        }
        List<Holder> all = new ArrayList<>(s.holders());
        all.addAll(readers);
        return new State(s.name(), s.lastToken(), all, s.waiter(), line);
    }

    /** Reads live places of the line (ordered by name key, then ticket), by name key. */
    private static void readLine(ResultSet rs, Map<String, List<Holder>> line) throws SQLException {
        while (rs.next()) {
            Mode mode = rs.getInt("writer") == 1 ? Mode.EXCLUSIVE : Mode.SHARED;
            line.computeIfAbsent(rs.getString("name_key"), x -> new ArrayList<>())
                    .add(new Holder(mode, rs.getString("owner"), 0, rs.getLong("left_ms"), -1, -1, true));
        }
    }
}
