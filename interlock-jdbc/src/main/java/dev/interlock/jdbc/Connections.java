package dev.interlock.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Properties;
import java.util.concurrent.Executor;
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
    abstract Borrowed borrow() throws SQLException;

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

        @Override
        Borrowed borrow() throws SQLException {
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

    /** Connections opened from a JDBC URL, a few kept idle between operations. */
    static final class FromUrl extends Connections {
        private static final int MAX_IDLE = 8;
        private final String url;
        private final Properties properties;
        private final ArrayDeque<Connection> idle = new ArrayDeque<>();
        private boolean closed;

        FromUrl(String url, Properties properties, int networkTimeoutMs) {
            super(networkTimeoutMs);
            this.url = url;
            this.properties = properties;
        }

        Connection open() throws SQLException {
            Connection c = DriverManager.getConnection(url, properties);
            try {
                c.setAutoCommit(true);
            } catch (SQLException e) {
                closeQuietly(c);
                throw e;
            }
            setNetworkTimeout(c, networkTimeoutMs);
            return c;
        }

        @Override
        Borrowed borrow() throws SQLException {
            Connection c;
            synchronized (this) {
                c = idle.pollLast();
            }
            boolean wasIdle = c != null;
            if (c == null) {
                c = open();
            }
            Connection conn = c;
            return new Borrowed(conn, wasIdle) {
                @Override
                void giveBack(boolean broken) {
                    if (broken || !reset(conn)) {
                        closeQuietly(conn);
                        return;
                    }
                    synchronized (FromUrl.this) {
                        if (!closed && idle.size() < MAX_IDLE) {
                            idle.addLast(conn);
                            return;
                        }
                    }
                    closeQuietly(conn);
                }
            };
        }

        /** Closes the idle connections: after one of them failed, the others (same server) likely died too. */
        void dropIdle() {
            ArrayDeque<Connection> old;
            synchronized (this) {
                old = new ArrayDeque<>(idle);
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
