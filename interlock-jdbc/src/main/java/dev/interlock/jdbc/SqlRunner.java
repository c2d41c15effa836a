package dev.interlock.jdbc;

import dev.interlock.jdbc.NamedSql.Args;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.PacedTimer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * How the store's statements run: on a borrowed connection in autocommit mode, each under the
 * statement time limit, retried where that is safe, and in a transaction where an operation
 * needs more than one statement. Knows nothing of locks.
 */
final class SqlRunner {
    private static final Log log = Log.of(SqlRunner.class);

    @FunctionalInterface
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * The least time a statement (or the opening of a connection) is given when the caller's wait
     * is nearly over: enough for a healthy database to answer, so that the clean-up after a wait
     * that ran out (giving up a place in line) still gets through.
     */
    static final long FLOOR_MS = 250;
    /**
     * How long after its capped time limit a statement whose server does not answer at all (a
     * paused server ignores a cancel too) is cut off by the connection's network timeout.
     */
    static final long CUT_OFF_AFTER_MS = 500;
    /** Where this thread's caller stops waiting ({@link System#nanoTime()}), while {@link #waitEndsAt} is in force. */
    private static final ThreadLocal<long[]> WAIT_ENDS = new ThreadLocal<>();

    private final String description;
    private final Dialect dialect;
    private final Connections connections;
    private final SqlFailures failures;
    final int queryTimeoutSeconds;
    /** The statement time limit in ms. */
    private final long statementMs;
    /** Whether a timer of ours enforces the statement time limit ({@link #canceller}) rather than the driver's query timeout. */
    private final boolean cancelsFromTimer;
    /** Cancels statements that outrun their limit (see {@link #query}); started at the first statement. */
    private volatile ScheduledThreadPoolExecutor canceller;
    /** Set by {@link #close}; guarded by this. */
    private boolean stopped;

    SqlRunner(
            String description,
            Dialect dialect,
            Connections connections,
            SqlFailures failures,
            Duration statementTimeout) {
        this.description = description;
        this.dialect = dialect;
        this.connections = connections;
        this.failures = failures;
        this.statementMs = Math.max(1, statementTimeout.toMillis());
        this.queryTimeoutSeconds = (int) Math.max(1, (statementTimeout.toMillis() + 999) / 1000);
        this.cancelsFromTimer = dialect.cancelsFromTimer();
    }

    // ---------------------------------------------------------------- the caller's deadline

    /** Ends a {@link #waitEndsAt} scope. */
    interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Until the scope closes, the statements and connects of this thread end by {@code endNanos}
     * ({@link System#nanoTime()}), each given at least {@link #FLOOR_MS}: a waiting acquisition's
     * call in flight must not hold its caller past the wait's deadline (a paused server otherwise
     * holds it for the whole statement timeout, and the connection's network timeout after it).
     */
    static Scope waitEndsAt(long endNanos) {
        long[] before = WAIT_ENDS.get();
        WAIT_ENDS.set(new long[] {endNanos});
        return () -> {
            if (before == null) {
                WAIT_ENDS.remove();
            } else {
                WAIT_ENDS.set(before);
            }
        };
    }

    /** How long the next statement (or connect) may take: the statement limit, or less if the caller's wait ends sooner. */
    long budgetMs() {
        long[] end = WAIT_ENDS.get();
        if (end == null) {
            return statementMs;
        }
        long left = TimeUnit.NANOSECONDS.toMillis(end[0] - System.nanoTime());
        return Math.min(statementMs, Math.max(FLOOR_MS, left));
    }

    /** True once the caller's wait on this thread is over (never outside a {@link #waitEndsAt} scope). */
    private static boolean waitOver() {
        long[] end = WAIT_ENDS.get();
        return end != null && end[0] - System.nanoTime() <= 0;
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
                long budget = budgetMs();
                b = connections.borrow(budget < statementMs ? budget : Connections.NO_CAP);
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
                boolean again = dialect.isRetryable(e) || (broken && idempotent && attempt == 0 && !waitOver());
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

    // ---------------------------------------------------------------- statements

    PreparedStatement prepare(Connection c, NamedSql sql, Args args) throws SQLException {
        return prepare(c, sql, args, false);
    }

    /** With {@code keys}, the statement reports generated keys (MySQL's {@code LAST_INSERT_ID(expr)}). */
    PreparedStatement prepare(Connection c, NamedSql sql, Args args, boolean keys) throws SQLException {
        return prepare(c, sql, args, keys, !cancelsFromTimer);
    }

    /**
     * Statements written as one text, for {@link #queryAfterCounts}: its time limit comes from the
     * store's timer, never from the driver's query timeout, which MariaDB Connector/J gives by
     * prefixing the text with {@code SET STATEMENT max_statement_time=... FOR}, so that it would
     * bound the first statement only.
     */
    PreparedStatement prepareText(Connection c, NamedSql sql, Args args) throws SQLException {
        return prepare(c, sql, args, false, false);
    }

    private PreparedStatement prepare(Connection c, NamedSql sql, Args args, boolean keys, boolean driverTimeout)
            throws SQLException {
        PreparedStatement ps =
                keys ? c.prepareStatement(sql.text, Statement.RETURN_GENERATED_KEYS) : c.prepareStatement(sql.text);
        try {
            if (driverTimeout) {
                long budget = budgetMs();
                ps.setQueryTimeout(
                        budget < statementMs ? (int) Math.max(1, (budget + 999) / 1000) : queryTimeoutSeconds);
            }
            sql.bind(ps, args);
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    /** Runs an UPDATE, INSERT or DELETE; returns the rows it changed. */
    int update(Connection c, NamedSql sql, Args args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args)) {
            return exec(ps);
        }
    }

    /** The first column of the first row of a query, or {@code none} if it returns no row. */
    long queryLong(Connection c, NamedSql sql, Args args, long none) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args);
                ResultSet rs = query(ps)) {
            return rs.next() ? rs.getLong(1) : none;
        }
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

    ResultSet query(PreparedStatement ps) throws SQLException {
        return limited(ps, ps::executeQuery, false);
    }

    int exec(PreparedStatement ps) throws SQLException {
        return limited(ps, ps::executeUpdate, false);
    }

    /**
     * Runs statements written as one text ({@code "UPDATE ...; WITH ... SELECT ..."}) and returns
     * the rows of the first one that gives rows, the statements before it having given counts.
     * pgjdbc sends such a text in one round trip (each statement's Parse, Bind and Execute, then
     * one Sync), and PostgreSQL runs everything up to a Sync as one transaction in autocommit mode
     * (docs/jdbc.md, "Semaphores"). MySQL/MariaDB run such a text (sent with the driver's
     * {@code allowMultiQueries}) statement after statement, stopping at the first error. The time
     * limit is the whole text's, enforced by the store's timer ({@link #prepareText}).
     */
    ResultSet queryAfterCounts(PreparedStatement ps) throws SQLException {
        return limited(
                ps,
                () -> {
                    boolean rows = ps.execute();
                    while (!rows) {
                        if (ps.getUpdateCount() == -1) {
                            throw new SQLException("the statements sent together gave no rows");
                        }
                        rows = ps.getMoreResults();
                    }
                    return ps.getResultSet();
                },
                true);
    }

    /**
     * Runs statements written as one text that give counts only (no rows), and returns the count
     * of each, in order (0 for one that changes no rows, such as COMMIT). Every result is read
     * before this returns, so an error of the last statement is thrown. The time limit is the
     * whole text's, as for {@link #queryAfterCounts}.
     */
    int[] counts(PreparedStatement ps) throws SQLException {
        return limited(
                ps,
                () -> {
                    List<Integer> counts = new ArrayList<>();
                    boolean rows = ps.execute();
                    while (true) {
                        if (rows) {
                            throw new SQLException("a statement meant to give a count gave rows");
                        }
                        int n = ps.getUpdateCount();
                        if (n == -1) {
                            break;
                        }
                        counts.add(n);
                        rows = ps.getMoreResults();
                    }
                    return counts.stream().mapToInt(Integer::intValue).toArray();
                },
                true);
    }

    @FunctionalInterface
    private interface Execution<T> {
        T run() throws SQLException;
    }

    /**
     * Runs {@code execution} of {@code ps} under the statement time limit (or the caller's deadline,
     * if sooner), enforced by the store's timer where the dialect says so or {@code byTimer}.
     */
    private <T> T limited(PreparedStatement ps, Execution<T> execution, boolean byTimer) throws SQLException {
        long budget = budgetMs();
        ScheduledFuture<?> limit = cancelsFromTimer || byTimer ? limit(ps, budget) : null;
        Connection cut = cutOffAt(ps, budget);
        try {
            return execution.run();
        } finally {
            withdraw(limit);
            if (cut != null) {
                Connections.setNetworkTimeout(cut, connections.networkTimeoutMs);
            }
        }
    }

    /**
     * A statement capped by the caller's deadline: the connection's network timeout brought down to
     * just after the cap, since a server that is paused answers neither the statement nor its
     * cancel. The connection is then broken and thrown away; put back after the statement.
     *
     * @return the connection whose network timeout to put back, or null if the statement is not capped
     */
    private Connection cutOffAt(PreparedStatement ps, long budgetMs) throws SQLException {
        if (budgetMs >= statementMs) {
            return null;
        }
        Connection c = ps.getConnection();
        Connections.setNetworkTimeout(c, (int) (budgetMs + CUT_OFF_AFTER_MS));
        return c;
    }

    private ScheduledFuture<?> limit(PreparedStatement ps, long budgetMs) {
        try {
            return canceller().schedule(() -> cancel(ps), Math.min(statementMs, budgetMs), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
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
            log.debug("{} - a statement ran past its time limit: cancelling it", description);
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
                        throw new RejectedExecutionException("closed");
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

    // ---------------------------------------------------------------- transactions

    /** Runs {@code work} in one transaction on {@code c}, which is back in autocommit mode afterwards. */
    static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
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
    static final class Rollback extends SQLException {
        private static final long serialVersionUID = 1L;
        final transient Object result;

        Rollback(Object result) {
            super("rollback", null, 0, null);
            this.result = result;
        }
    }

    /** As {@link #inTransaction}; a {@link Rollback} thrown by {@code work} rolls back and gives its result. */
    @SuppressWarnings("unchecked")
    static <T> T rolledBack(Connection c, Work<T> work) throws SQLException {
        try {
            return inTransaction(c, work);
        } catch (Rollback r) {
            return (T) r.result;
        }
    }
}
