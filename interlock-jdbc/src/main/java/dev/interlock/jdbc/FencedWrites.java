package dev.interlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Fenced writes of SQL rows: a row protected by a lock (of any Interlock backend) carries the
 * fencing token of the last write in a column, and a write carrying an older token is refused by
 * the database itself, in the same statement that writes. A holder paused past its lease, who
 * wakes up and writes after a newer holder did, changes nothing.
 *
 * <p>The table needs one nullable {@code BIGINT} column for the token (NULL: no fenced write yet):
 * <pre>{@code ALTER TABLE accounts ADD COLUMN fence_token BIGINT}</pre>
 * and every write of a protected row goes through here:
 * <pre>{@code
 * FencedWrites accounts = FencedWrites.on("accounts", "fence_token");
 * try (Lease lease = locks.acquire("account:42", Duration.ofSeconds(10))) {
 *     accounts.update(connection, lease.token(), "balance = balance + ?", "id = ?", 100, 42).orThrow();
 * }
 * }</pre>
 * which runs {@code UPDATE accounts SET balance = balance + ?, fence_token = ? WHERE (id = ?) AND
 * (fence_token IS NULL OR fence_token <= ?)}. The refusal is atomic (it is the WHERE of the
 * write); only when nothing was written does a second statement read the row, to tell
 * {@link Outcome#REFUSED} (a newer token already wrote, with that token) from
 * {@link Outcome#NO_SUCH_ROW}. Equal tokens pass: one holder may write several times.
 *
 * <p>Identifiers (table, columns) are pasted into the statements, so they must be plain: letters,
 * digits and {@code _}, not starting with a digit; a table may be schema-qualified
 * ({@code app.accounts}). They are not quoted, so each database folds their case as usual. Values
 * are always bound. The caller owns the connection and its transaction: nothing here commits,
 * and with auto-commit off the insert of {@link #upsert} runs under a savepoint, so a lost insert
 * race does not abort the caller's transaction. Tested on PostgreSQL and H2; the SQL is standard.
 * Thread-safe and immutable.
 */
public final class FencedWrites {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

    private final String table;
    private final String column;

    private FencedWrites(String table, String column) {
        this.table = table;
        this.column = column;
    }

    /**
     * Fenced writes of {@code table}, whose token is kept in {@code tokenColumn}.
     *
     * @throws IllegalArgumentException naming the rule if either is not a plain identifier
     */
    public static FencedWrites on(String table, String tokenColumn) {
        if (table == null || !TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("the table name '" + table + "' must be a plain identifier, optionally"
                    + " schema-qualified: letters, digits or '_', not starting with a digit (no quotes or spaces)");
        }
        return new FencedWrites(table, column(tokenColumn));
    }

    private static String column(String c) {
        if (c == null || !PLAIN.matcher(c).matches()) {
            throw new IllegalArgumentException(
                    "the column name '" + c + "' must be a plain identifier: letters, digits or '_',"
                            + " not starting with a digit (no quotes, dots or spaces)");
        }
        return c;
    }

    /** What a fenced write did. */
    public enum Outcome {
        /** The row(s) matched and were written; they carry the token now. */
        UPDATED,
        /** No row matched the key, and {@link #upsert} inserted one carrying the token. */
        INSERTED,
        /** Matching rows exist, but carry a larger token: a newer holder already wrote. Nothing was written. */
        REFUSED,
        /** No row matches the WHERE clause. Nothing was written. */
        NO_SUCH_ROW
    }

    /**
     * The result of a fenced write: what happened, how many rows were written, and for
     * {@link Outcome#REFUSED} the token already in the row.
     */
    public record Result(Outcome outcome, int rows, long attemptedToken, OptionalLong currentToken, String table) {
        /** True if the write happened (updated or inserted). */
        public boolean written() {
            return outcome == Outcome.UPDATED || outcome == Outcome.INSERTED;
        }

        /**
         * This result if the write happened.
         *
         * @throws SQLException with SQLState {@code "IL001"} (a class no database uses) for a refusal
         *     naming both tokens, {@code "02000"} (no data) for no such row
         */
        public Result orThrow() throws SQLException {
            switch (outcome) {
                case REFUSED:
                    throw new SQLException(
                            "refused to write " + table + " with fencing token " + attemptedToken + ": a write with"
                                    + " token " + currentToken.orElse(-1)
                                    + " already landed on the row, so the lock this write was made"
                                    + " under has been lost and taken by someone else since; nothing was written",
                            "IL001");
                case NO_SUCH_ROW:
                    throw new SQLException(
                            "no row of " + table + " matches the write (fencing token " + attemptedToken
                                    + "); nothing was written",
                            "02000");
                default:
                    return this;
            }
        }
    }

    /**
     * {@code UPDATE table SET <set>, token = ? WHERE (<where>) AND (token IS NULL OR token <= ?)}.
     *
     * @param set the SET list without the token, e.g. {@code "balance = balance + ?, note = ?"}
     * @param where the condition naming the row(s), e.g. {@code "id = ?"}; it should name one row by its key
     * @param params the values of the placeholders of {@code set}, then of {@code where}, in order
     * @return {@link Outcome#UPDATED}, {@link Outcome#REFUSED} or {@link Outcome#NO_SUCH_ROW}. If the
     *     condition matches several rows, those carrying a token not larger than {@code token} are
     *     written and the outcome is UPDATED with their count
     * @throws SQLException from the driver
     * @throws IllegalArgumentException if {@code token} is negative
     */
    public Result update(Connection connection, long token, String set, String where, Object... params)
            throws SQLException {
        requireToken(token);
        Objects.requireNonNull(set, "set");
        Objects.requireNonNull(where, "where");
        int setParams = placeholders(set);
        if (setParams + placeholders(where) != params.length) {
            throw new IllegalArgumentException("the SET list and the WHERE clause have " + setParams + " and "
                    + placeholders(where) + " placeholders, but " + params.length + " values were given");
        }
        List<Object> setValues = List.of(params).subList(0, setParams);
        List<Object> whereValues = List.of(params).subList(setParams, params.length);
        return update(connection, token, set, setValues, where, whereValues);
    }

    /**
     * Writes the row whose key is {@code key}: updates it (fenced, as {@link #update}) if it exists,
     * else inserts it carrying {@code token}. An insert that loses a race with another (a unique
     * key violation) is retried as the fenced update.
     *
     * @param key the key columns and their values (the table must have a unique key on them)
     * @param values the other columns to write and their values
     * @return {@link Outcome#UPDATED}, {@link Outcome#INSERTED} or {@link Outcome#REFUSED}
     */
    public Result upsert(Connection connection, long token, Map<String, ?> key, Map<String, ?> values)
            throws SQLException {
        requireToken(token);
        if (key.isEmpty()) {
            throw new IllegalArgumentException("the key of an upsert must name at least one column");
        }
        StringBuilder set = new StringBuilder();
        for (String c : values.keySet()) {
            set.append(set.length() == 0 ? "" : ", ").append(column(c)).append(" = ?");
        }
        StringBuilder where = new StringBuilder();
        for (String c : key.keySet()) {
            where.append(where.length() == 0 ? "" : " AND ").append(column(c)).append(" = ?");
        }
        List<Object> setValues = new ArrayList<>(values.values());
        List<Object> keyValues = new ArrayList<>(key.values());
        for (int attempt = 0; ; attempt++) {
            Result r = update(connection, token, set.toString(), setValues, where.toString(), keyValues);
            if (r.outcome() != Outcome.NO_SUCH_ROW) {
                return r;
            }
            Map<String, Object> row = new LinkedHashMap<>(key);
            row.putAll(values);
            StringBuilder cols = new StringBuilder();
            StringBuilder marks = new StringBuilder();
            for (String c : row.keySet()) {
                cols.append(column(c)).append(", ");
                marks.append("?, ");
            }
            String sql = "INSERT INTO " + table + " (" + cols + column + ") VALUES (" + marks + "?)";
            Savepoint sp = connection.getAutoCommit() ? null : connection.setSavepoint();
            try (PreparedStatement ps = connection.prepareStatement(sql)) {
                int i = bind(ps, 1, new ArrayList<>(row.values()));
                ps.setLong(i, token);
                int n = ps.executeUpdate();
                if (sp != null) {
                    connection.releaseSavepoint(sp);
                }
                return new Result(Outcome.INSERTED, n, token, OptionalLong.empty(), table);
            } catch (SQLException e) {
                if (sp != null) {
                    connection.rollback(sp);
                }
                String state = e.getSQLState();
                if (attempt == 0 && state != null && state.startsWith("23")) {
                    continue; // someone inserted the row meanwhile: now it exists, fence against it
                }
                throw e;
            }
        }
    }

    private Result update(
            Connection connection,
            long token,
            String set,
            List<Object> setValues,
            String where,
            List<Object> whereValues)
            throws SQLException {
        String sql = "UPDATE " + table + " SET " + set + ", " + column + " = ? WHERE (" + where + ") AND (" + column
                + " IS NULL OR " + column + " <= ?)";
        int n;
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            int i = bind(ps, 1, setValues);
            ps.setLong(i++, token);
            i = bind(ps, i, whereValues);
            ps.setLong(i, token);
            n = ps.executeUpdate();
        }
        if (n > 0) {
            return new Result(Outcome.UPDATED, n, token, OptionalLong.empty(), table);
        }
        // Nothing written: tell a newer token from a missing row (a report only; the refusal itself was atomic).
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT MAX(" + column + "), COUNT(*) FROM " + table + " WHERE (" + where + ")")) {
            bind(ps, 1, whereValues);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long max = rs.getLong(1);
                boolean hasToken = !rs.wasNull();
                long rows = rs.getLong(2);
                if (rows == 0) {
                    return new Result(Outcome.NO_SUCH_ROW, 0, token, OptionalLong.empty(), table);
                }
                return new Result(
                        Outcome.REFUSED, 0, token, hasToken ? OptionalLong.of(max) : OptionalLong.empty(), table);
            }
        }
    }

    private static int bind(PreparedStatement ps, int at, List<Object> values) throws SQLException {
        for (Object v : values) {
            ps.setObject(at++, v);
        }
        return at;
    }

    /** The number of '?' placeholders outside quoted strings. */
    private static int placeholders(String sql) {
        int n = 0;
        boolean quoted = false;
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (c == '\'') {
                quoted = !quoted;
            } else if (c == '?' && !quoted) {
                n++;
            }
        }
        return n;
    }

    private static void requireToken(long token) {
        if (token < 0) {
            throw new IllegalArgumentException("a fencing token is never negative; got " + token);
        }
    }
}
