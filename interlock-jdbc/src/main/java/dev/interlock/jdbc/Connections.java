package dev.interlock.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import javax.sql.DataSource;

/**
 * Where the backend's own connections come from: a caller's {@link DataSource} (usually a pool)
 * or a JDBC URL (then a few idle connections are kept here). A connection is borrowed for one
 * operation, in autocommit mode, and given back; it is never one the caller is using, so a lock
 * operation never commits or rolls back the caller's work.
 *
 * <p>Every borrowed connection gets a network timeout, so that a database that stops answering
 * (a cut link, a paused server) fails the call instead of hanging a renewal forever.
 */
abstract class Connections implements AutoCloseable {
    private static final Executor DIRECT = Runnable::run;

    final int networkTimeoutMs;

    Connections(int networkTimeoutMs) {
        this.networkTimeoutMs = networkTimeoutMs;
    }

    /** A connection in autocommit mode, with the network timeout set. */
    final Borrowed borrow() throws SQLException {
        return borrow(NO_CAP);
    }

    /** No bound on opening a connection but the connection's own timeouts. */
    static final long NO_CAP = 0;

    /**
     * As {@link #borrow()}; a connection opened for it gives up after about {@code openWithinMs}
     * (the caller's wait ends then) where the driver's options allow it, or {@link #NO_CAP}.
     */
    abstract Borrowed borrow(long openWithinMs) throws SQLException;

    /** A connection for this object alone until it closes it (the LISTEN connection). */
    abstract Connection dedicated() throws SQLException;

    @Override
    public abstract void close();

    /** One borrowed connection; {@link #giveBack(boolean)} exactly once. */
    abstract static class Borrowed {
        final Connection connection;
        /** True if it came from idle connections kept here (so it may have died while idle). */
        final boolean wasIdle;

        Borrowed(Connection connection, boolean wasIdle) {
            this.connection = connection;
            this.wasIdle = wasIdle;
        }

        /** Returns it, or throws it away if {@code broken} (its state is unknown after a failure). */
        abstract void giveBack(boolean broken);
    }

    static void setNetworkTimeout(Connection c, int ms) {
        try {
            c.setNetworkTimeout(DIRECT, ms);
        } catch (SQLException | UnsupportedOperationException | AbstractMethodError e) {
            // Embedded databases (H2, SQLite) have no network and may not support it.
        }
    }

    static int networkTimeout(Connection c) {
        try {
            return c.getNetworkTimeout();
        } catch (SQLException | UnsupportedOperationException | AbstractMethodError e) {
            return -1;
        }
    }

    static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // already broken
        }
    }

    /** Resets what an operation may have changed before a connection is reused. */
    static boolean reset(Connection c) {
        try {
            if (!c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------------------------------

    /** Connections from the caller's DataSource: borrowed per operation and closed (given back to its pool). */
    static final class FromDataSource extends Connections {
        private final DataSource dataSource;

        FromDataSource(DataSource dataSource, int networkTimeoutMs) {
            super(networkTimeoutMs);
            this.dataSource = dataSource;
        }

        /** The application's pool opens its connections by its own rules. */
        @Override
        Borrowed borrow(long openWithinMs) throws SQLException {
            Connection c = dataSource.getConnection();
            try {
                if (!c.getAutoCommit()) {
                    c.setAutoCommit(true);
                }
            } catch (SQLException e) {
                closeQuietly(c);
                throw e;
            }
            int before = networkTimeout(c);
            setNetworkTimeout(c, networkTimeoutMs);
            return new Borrowed(c, false) {
                @Override
                void giveBack(boolean broken) {
                    if (!broken && reset(c) && before >= 0) {
                        setNetworkTimeout(c, before);
                    }
                    // A pool's connection is always closed (returned); the pool tests or replaces a broken one.
                    closeQuietly(c);
                }
            };
        }

        @Override
        Connection dedicated() throws SQLException {
            Connection c = dataSource.getConnection();
            c.setAutoCommit(true);
            return c;
        }

        @Override
        public void close() {
            // The DataSource belongs to the caller.
        }
    }

    /**
     * Connections opened from a JDBC URL: at most {@link #MAX_OPEN} borrowed at once, whatever the
     * number of threads and names (a borrower beyond waits for one), and a few kept idle between
     * operations. On a database server an idle connection is closed after {@link #IDLE_CLOSE_MS}
     * unused, so that a process that only waits (a statement every second or two) holds none
     * between its statements: 50 waiting processes must fit PostgreSQL's 100 connections. An
     * embedded database (H2, SQLite in this process) keeps them: they cost the server nothing, and
     * an in-memory H2 database ends with its last connection.
     */
    static final class FromUrl extends Connections {
        static final int MAX_OPEN = 8;
        static final long IDLE_CLOSE_MS = 500;
        private static final ScheduledThreadPoolExecutor IDLE_CLOSER = idleCloser();
        private final String url;
        private final Properties properties;
        /** The properties that bound opening a connection to the given ms (the driver's timeouts), or null if unknown. */
        private final LongFunction<Properties> openWithin;

        private final boolean closeIdle;
        private final Semaphore permits = new Semaphore(MAX_OPEN, true);
        /** Idle connections, the longest idle first; guarded by this. */
        private final ArrayDeque<Idle> idle = new ArrayDeque<>();

        private boolean closing;
        private boolean closed;

        private record Idle(Connection connection, long since) {}

        FromUrl(String url, Properties properties, int networkTimeoutMs) {
            this(url, properties, null, networkTimeoutMs);
        }

        FromUrl(String url, Properties properties, LongFunction<Properties> openWithin, int networkTimeoutMs) {
            super(networkTimeoutMs);
            this.url = url;
            this.properties = properties;
            this.openWithin = openWithin;
            this.closeIdle = !embedded(url);
        }

        /** A database in this process: SQLite, or H2 but for its TCP/TLS client. */
        static boolean embedded(String url) {
            String lower = url.toLowerCase(Locale.ROOT);
            return lower.startsWith("jdbc:sqlite:")
                    || (lower.startsWith("jdbc:h2:")
                            && !lower.startsWith("jdbc:h2:tcp:")
                            && !lower.startsWith("jdbc:h2:ssl:"));
        }

        private static ScheduledThreadPoolExecutor idleCloser() {
            ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "interlock-jdbc-idle");
                t.setDaemon(true);
                return t;
            });
            e.setKeepAliveTime(5, TimeUnit.SECONDS);
            e.allowCoreThreadTimeOut(true);
            e.setRemoveOnCancelPolicy(true);
            return e;
        }

        Connection open() throws SQLException {
            return open(NO_CAP);
        }

        private Connection open(long withinMs) throws SQLException {
            Properties p = withinMs == NO_CAP || openWithin == null ? properties : openWithin.apply(withinMs);
            Connection c = connect(p);
            try {
                c.setAutoCommit(true);
            } catch (SQLException e) {
                closeQuietly(c);
                throw e;
            }
            setNetworkTimeout(c, networkTimeoutMs);
            return c;
        }

        /**
         * Opens a connection whatever this thread's interrupt status says, which is kept for the
         * caller (as in {@link #permit}): pgjdbc gives up a connect with a login timeout when its
         * thread is interrupted, before or during it ("Something unusual has occurred"), and the
         * clean-up of an interrupted acquire must still reach the database. Once more at most
         * after an interrupt that came during the connect.
         */
        private Connection connect(Properties p) throws SQLException {
            boolean interrupted = Thread.interrupted();
            try {
                for (int attempt = 0; ; attempt++) {
                    try {
                        return DriverManager.getConnection(url, p);
                    } catch (SQLException | RuntimeException e) {
                        if (!Thread.interrupted()) {
                            throw e;
                        }
                        interrupted = true;
                        if (attempt > 0) {
                            throw e;
                        }
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        Borrowed borrow(long openWithinMs) throws SQLException {
            if (!permit()) {
                throw new SQLTransientConnectionException(
                        "all " + MAX_OPEN + " connections of the lock space stayed busy for " + networkTimeoutMs
                                + " ms",
                        "08001");
            }
            Connection c;
            synchronized (this) {
                Idle i = idle.pollLast();
                c = i == null ? null : i.connection();
            }
            boolean wasIdle = c != null;
            if (c == null) {
                try {
                    c = open(openWithinMs);
                } catch (SQLException | RuntimeException e) {
                    permits.release();
                    throw e;
                }
            }
            Connection conn = c;
            return new Borrowed(conn, wasIdle) {
                @Override
                void giveBack(boolean broken) {
                    try {
                        if (broken || !reset(conn)) {
                            closeQuietly(conn);
                            return;
                        }
                        synchronized (FromUrl.this) {
                            if (!closed && idle.size() < MAX_OPEN) {
                                idle.addLast(new Idle(conn, System.nanoTime()));
                                closeIdleLater();
                                return;
                            }
                        }
                        closeQuietly(conn);
                    } finally {
                        permits.release();
                    }
                }
            };
        }

        /**
         * One of the {@link #MAX_OPEN} permits, waiting up to the network timeout. An interrupt does
         * not end the wait (it is kept for the caller): the clean-up of an interrupted acquire, such
         * as giving up its place in line, must still reach the database.
         */
        private boolean permit() {
            if (permits.tryAcquire()) {
                return true;
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(networkTimeoutMs);
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        return permits.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Schedules the closing of idle connections, unless it is scheduled already; under this. */
        private void closeIdleLater() {
            if (closeIdle && !closing && !idle.isEmpty()) {
                closing = true;
                long due = idle.peekFirst().since() + TimeUnit.MILLISECONDS.toNanos(IDLE_CLOSE_MS) - System.nanoTime();
                try {
                    IDLE_CLOSER.schedule(this::closeIdle, Math.max(0, due), TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    closing = false;
                }
            }
        }

        /** Closes the connections idle for {@link #IDLE_CLOSE_MS} or longer. */
        private void closeIdle() {
            List<Connection> old = new ArrayList<>();
            synchronized (this) {
                closing = false;
                long now = System.nanoTime();
                while (!idle.isEmpty()
                        && now - idle.peekFirst().since() >= TimeUnit.MILLISECONDS.toNanos(IDLE_CLOSE_MS)) {
                    old.add(idle.pollFirst().connection());
                }
                closeIdleLater();
            }
            old.forEach(Connections::closeQuietly);
        }

        /** Closes the idle connections: after one of them failed, the others (same server) likely died too. */
        void dropIdle() {
            List<Connection> old = new ArrayList<>();
            synchronized (this) {
                idle.forEach(i -> old.add(i.connection()));
                idle.clear();
            }
            old.forEach(Connections::closeQuietly);
        }

        @Override
        Connection dedicated() throws SQLException {
            return open();
        }

        @Override
        public void close() {
            synchronized (this) {
                closed = true;
            }
            dropIdle();
        }
    }
}
