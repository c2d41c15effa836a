package dev.interlock.jdbc;

import dev.interlock.spi.support.Durations;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Options of a {@code jdbc:} lock space. Immutable; build with {@link #builder()}, or give them
 * in the URL's query ({@code ?table=locks&create=true&poll=200ms&timeout=5s&listen=false}), where
 * Interlock takes them out before the URL reaches the driver.
 *
 * <ul>
 *   <li>{@code table} (default {@value #DEFAULT_TABLE}): the lock table; the shared holders live in
 *       {@code <table>_shared}. A plain identifier of at most 48 characters.</li>
 *   <li>{@code create} (default false): create both tables if they are missing. Off by default so
 *       that a typo in the table name is an error, not a second, unshared set of locks.</li>
 *   <li>{@code poll} (default 200ms): the longest wait between two tries of a waiter that no
 *       notification woke; waits start at 10ms and double up to it, jittered.</li>
 *   <li>{@code timeout} (default 10s): how long one statement may take, and (plus 5s) how long
 *       the driver waits for any reply, so that a hung database fails a renewal instead of
 *       hanging it.</li>
 *   <li>{@code listen} (default true): on PostgreSQL, wake waiters with LISTEN/NOTIFY on one
 *       connection per lock space (held for the life of the space).</li>
 * </ul>
 *
 * @since 0.1
 */
public final class JdbcOptions {
    /** The default lock table name. */
    public static final String DEFAULT_TABLE = "interlock_locks";

    private final String table;
    private final boolean createTable;
    private final Duration poll;
    private final Duration statementTimeout;
    private final boolean listen;

    private JdbcOptions(Builder b) {
        this.table = b.table;
        this.createTable = b.createTable;
        this.poll = b.poll;
        this.statementTimeout = b.statementTimeout;
        this.listen = b.listen;
    }

    /** Every option at its default. */
    public static JdbcOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public String table() {
        return table;
    }

    public boolean createTable() {
        return createTable;
    }

    public Duration poll() {
        return poll;
    }

    public Duration statementTimeout() {
        return statementTimeout;
    }

    public boolean listen() {
        return listen;
    }

    /** These options with those named in a URL's query applied on top. */
    JdbcOptions with(Map<String, String> fromUrl) {
        Builder b = new Builder();
        b.table = table;
        b.createTable = createTable;
        b.poll = poll;
        b.statementTimeout = statementTimeout;
        b.listen = listen;
        fromUrl.forEach((k, v) -> {
            switch (k) {
                case "table":
                    b.table(v);
                    break;
                case "create":
                    b.createTable(parseBoolean(k, v));
                    break;
                case "listen":
                    b.listen(parseBoolean(k, v));
                    break;
                case "poll":
                    b.poll(parseDuration(k, v));
                    break;
                case "timeout":
                    b.statementTimeout(parseDuration(k, v));
                    break;
                default:
                    throw new IllegalArgumentException("unknown option '" + k + "'");
            }
        });
        return b.build();
    }

    private static boolean parseBoolean(String key, String v) {
        switch (v.toLowerCase(Locale.ROOT)) {
            case "":
            case "true":
            case "yes":
            case "1":
                return true;
            case "false":
            case "no":
            case "0":
                return false;
            default:
                throw new IllegalArgumentException("option " + key + "=" + v + ": use true or false");
        }
    }

    /** Interlock's one duration grammar ({@link Durations}): {@code 500ms}, {@code 30s}, {@code 1h30m}, {@code 2.5}. */
    static Duration parseDuration(String key, String v) {
        try {
            return Durations.parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "option " + key + "=" + v + ": use a duration such as 500ms, 30s, 5m, 1h30m or 2.5 (seconds)");
        }
    }

    @Override
    public String toString() {
        return "JdbcOptions[table=" + table + ", create=" + createTable + ", poll=" + poll.toMillis() + "ms, timeout="
                + statementTimeout.toMillis() + "ms, listen=" + listen + "]";
    }

    /** Builds {@link JdbcOptions}. Not thread-safe. */
    public static final class Builder {
        private String table = DEFAULT_TABLE;
        private boolean createTable;
        private Duration poll = Duration.ofMillis(200);
        private Duration statementTimeout = Duration.ofSeconds(10);
        private boolean listen = true;

        private Builder() {}

        /**
         * The lock table.
         *
         * @throws IllegalArgumentException if it is not a plain identifier of at most 48 characters
         */
        public Builder table(String table) {
            this.table = TableName.validate(table);
            return this;
        }

        /** Create the tables if they are missing (default false). */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * The longest wait between two tries when no notification comes.
         *
         * @throws IllegalArgumentException unless between 1ms and 1 minute
         */
        public Builder poll(Duration poll) {
            Objects.requireNonNull(poll, "poll");
            if (poll.toMillis() < 1 || poll.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("poll must be between 1ms and 1m, was " + poll.toMillis() + "ms");
            }
            this.poll = poll;
            return this;
        }

        /**
         * How long one statement may take.
         *
         * @throws IllegalArgumentException unless between 1s and 10 minutes
         */
        public Builder statementTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.toMillis() < 1000 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException(
                        "timeout must be between 1s and 10m, was " + timeout.toMillis() + "ms");
            }
            this.statementTimeout = timeout;
            return this;
        }

        /** On PostgreSQL, use LISTEN/NOTIFY to wake waiters (default true). */
        public Builder listen(boolean listen) {
            this.listen = listen;
            return this;
        }

        public JdbcOptions build() {
            return new JdbcOptions(this);
        }
    }
}
