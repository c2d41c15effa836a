package dev.interlock.jdbc;

import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.Log;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One LISTEN connection per PostgreSQL lock space, shared by all its waiters: every release
 * statement ends with {@code pg_notify(channel, name_key)}, delivered when it commits, and this
 * thread bumps that key's {@link Signals} so its waiters try again at once.
 *
 * <p>Notifications are a shortcut, never the only way to learn of a release: a waiter also polls
 * (jittered, at most {@link #FALLBACK_POLL_MS} apart while this connection listens, faster while it
 * does not), so a notification lost with a connection costs latency, never liveness. After the
 * connection breaks it is opened again with a jittered backoff, and every waiter is woken, since
 * releases may have been missed meanwhile.
 *
 * <p>pgjdbc's {@code PGConnection.getNotifications(int)} is called by reflection, so that this module
 * needs no driver at compile time.
 */
final class PgListener implements AutoCloseable {
    private static final Log log = Log.of(PgListener.class);
    /** Longest wait of a waiter between tries while notifications arrive. */
    static final long FALLBACK_POLL_MS = 1000;

    private static final int RECEIVE_MS = 500;
    /** Check that the connection still answers every this many receive rounds (about 15s). */
    private static final int HEALTH_ROUNDS = 30;

    private final Connections connections;
    private final String channel;
    private final Signals signals;
    private final String description;
    /** Opened by {@link #close}: ends a pause between connections at once. */
    private final CountDownLatch closing = new CountDownLatch(1);

    private volatile boolean listening;
    private volatile boolean closed;
    private volatile Connection current;
    private Thread thread;

    PgListener(Connections connections, String channel, Signals signals, String description) {
        this.connections = connections;
        this.channel = channel;
        this.signals = signals;
        this.description = description;
    }

    /** Starts listening in the background (once; later calls do nothing). */
    synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        thread = new Thread(this::run, "interlock-jdbc-listen");
        thread.setDaemon(true);
        thread.start();
    }

    /** True while notifications are being received. */
    boolean listening() {
        return listening;
    }

    private void run() {
        // Reconnects: the mean wait doubles from 75ms to 3.75s, as earlier versions' [b/2, b] from 100ms to 5s.
        Backoff backoff = Backoff.exponential(Duration.ofMillis(75), Duration.ofMillis(3750));
        boolean warned = false;
        while (!closed) {
            Connection c = null;
            try {
                c = connections.dedicated();
                current = c;
                if (closed) {
                    break;
                }
                Receiver receiver = Receiver.of(c);
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN \"" + channel + "\"");
                }
                listening = true;
                backoff.reset();
                if (warned) {
                    log.info("{} - listening for releases again", description);
                    warned = false;
                }
                signals.bumpAll(); // releases may have been missed while not listening
                int rounds = 0;
                while (!closed) {
                    for (String key : receiver.receive(RECEIVE_MS)) {
                        signals.bump(key);
                    }
                    if (++rounds % HEALTH_ROUNDS == 0) {
                        try (Statement st = c.createStatement()) {
                            st.setQueryTimeout(10);
                            st.execute("SELECT 1");
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                listening = false;
                if (closed) {
                    break;
                }
                if (e instanceof UnsupportedOperationException) {
                    log.warn("{} - cannot listen for releases ({}); waiters poll instead", description, e.getMessage());
                    return;
                }
                if (!warned) {
                    log.warn(
                            "{} - listening for releases failed, waiters poll until it is back: {}",
                            description,
                            e.getMessage());
                    warned = true;
                }
                pause(TimeUnit.NANOSECONDS.toMillis(backoff.nextNanos()));
            } finally {
                listening = false;
                current = null;
                if (c != null) {
                    Connections.closeQuietly(c);
                }
            }
        }
    }

    /** Waits {@code ms} before the next connection, unless the listener is closed first. */
    private void pause(long ms) {
        try {
            closing.await(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    @Override
    public void close() {
        closed = true;
        closing.countDown();
        Connection c = current;
        if (c != null) {
            Connections.closeQuietly(c); // ends a blocked receive
        }
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** pgjdbc's notification API, through reflection. */
    private static final class Receiver {
        private final Object pg;
        private final Method getNotifications;
        private final Method getParameter;

        private Receiver(Object pg, Method getNotifications, Method getParameter) {
            this.pg = pg;
            this.getNotifications = getNotifications;
            this.getParameter = getParameter;
        }

        static Receiver of(Connection c) throws SQLException {
            try {
                ClassLoader cl = c.getClass().getClassLoader();
                Class<?> pgConnection = Class.forName("org.postgresql.PGConnection", false, cl);
                Class<?> pgNotification = Class.forName("org.postgresql.PGNotification", false, cl);
                if (!c.isWrapperFor(pgConnection)) {
                    throw new UnsupportedOperationException("the connection is not a pgjdbc connection");
                }
                return new Receiver(
                        c.unwrap(pgConnection),
                        pgConnection.getMethod("getNotifications", int.class),
                        pgNotification.getMethod("getParameter"));
            } catch (ClassNotFoundException | NoSuchMethodException e) {
                throw new UnsupportedOperationException("the PostgreSQL driver is not pgjdbc 42.x");
            }
        }

        List<String> receive(int timeoutMs) throws SQLException {
            try {
                Object[] ns = (Object[]) getNotifications.invoke(pg, timeoutMs);
                if (ns == null || ns.length == 0) {
                    return List.of();
                }
                List<String> keys = new ArrayList<>(ns.length);
                for (Object n : ns) {
                    keys.add((String) getParameter.invoke(n));
                }
                return keys;
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof SQLException) {
                    throw (SQLException) e.getCause();
                }
                throw new IllegalStateException(
                        "receiving notifications failed: " + e.getCause().getMessage(), e.getCause());
            } catch (IllegalAccessException e) {
                throw new UnsupportedOperationException("pgjdbc's notification API is not accessible");
            }
        }
    }
}
