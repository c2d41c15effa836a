package dev.interlock.jdbc;

import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

/**
 * What differs between the databases: column types, the database's clock in SQL, and how a
 * statement hands back the row it changed. Every time value Interlock compares is computed by
 * the database from its own clock ({@link #now()}); Java never supplies a timestamp.
 *
 * <p>SET clauses written for these dialects never read a column that an earlier assignment of the
 * same SET changed: MySQL evaluates assignments left to right on the updated row, the others on
 * the old row, and both must give the same result.
 */
abstract class Dialect {
    /** The database's product, for messages. */
    abstract String product();

    /** The database's current time as an SQL expression (timestamp, or epoch milliseconds for SQLite). */
    abstract String now();

    /** {@code ts} plus the milliseconds of the bound parameter {@code ?}. */
    abstract String plusMillisParam(String ts);

    /** {@code to - from} in whole milliseconds, as an SQL expression. */
    abstract String millisBetween(String from, String to);

    /** The larger of two timestamps. */
    String greatest(String a, String b) {
        return "GREATEST(" + a + ", " + b + ")";
    }

    /**
     * How an UPDATE hands back columns of the row it changed in the same statement: a query text
     * that wraps {@code update} (RETURNING, FINAL TABLE), or null if the dialect cannot.
     */
    abstract String updateReturning(String update, String columns);

    /**
     * The token expression of a grant: {@code token + 1}, wrapped where the dialect returns it
     * through another channel (MySQL's {@code LAST_INSERT_ID(expr)}).
     */
    String nextToken(String tokenColumn) {
        return tokenColumn + " + 1";
    }

    /** The lock store's statements on this database, and how each operation runs them. */
    StandardSql statements(String table) {
        return new StandardSql(this, table);
    }

    /**
     * True if statements are cancelled at their time limit by a timer of the store
     * ({@link SqlRunner}) rather than by the driver's query timeout.
     */
    boolean cancelsFromTimer() {
        return false;
    }

    /** True if the database can notify waiters of releases (LISTEN/NOTIFY). */
    boolean notifies() {
        return false;
    }

    /** A query whose single value is 1 when the database refuses writes (a replica), or null if there is none. */
    String readOnlyQuery() {
        return null;
    }

    /**
     * CREATE TABLE statements for the lock table, its shared-holder table and its waiting line.
     * The lock table's last column, {@code permits}, came with semaphores: a table made by an
     * earlier build gets it from {@link StandardSql#PERMITS_COLUMN_DDL}.
     */
    abstract List<String> ddl(String table, String shared, String line);

    /** True if {@code e} says a row with that key already exists. */
    boolean isDuplicateKey(SQLException e) {
        String s = e.getSQLState();
        return s != null && s.startsWith("23");
    }

    /** True if {@code e} says the column already exists (an ALTER TABLE ... ADD COLUMN that lost a race). */
    boolean isDuplicateColumn(SQLException e) {
        String s = e.getSQLState();
        String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(Locale.ROOT);
        return "42701".equals(s)
                || "42S21".equals(s)
                || e.getErrorCode() == 1060
                || e.getErrorCode() == 42121
                || m.contains("duplicate column");
    }

    /** True if {@code e} says the table does not exist. */
    boolean isMissingTable(SQLException e) {
        String s = e.getSQLState();
        return "42P01".equals(s)
                || "42S02".equals(s)
                || "42S04".equals(s)
                || e.getErrorCode() == 42102
                || e.getErrorCode() == 42104;
    }

    /** True if {@code e} says a column does not exist. */
    boolean isMissingColumn(SQLException e) {
        String s = e.getSQLState();
        return "42703".equals(s) || "42S22".equals(s) || "42122".equals(s);
    }

    /** True if the transaction was rolled back by a deadlock or serialization failure and may simply be run again. */
    boolean isRetryable(SQLException e) {
        String s = e.getSQLState();
        return "40001".equals(s) || "40P01".equals(s) || e.getErrorCode() == 1213 || e.getErrorCode() == 1205;
    }

    /** True if the connection is unusable after {@code e} (it must be thrown away, and the call may be retried on another). */
    boolean isConnectionError(SQLException e) {
        String s = e.getSQLState();
        return s != null && (s.startsWith("08") || s.equals("57P01") || s.equals("57P02") || s.equals("57P03"));
    }

    /** The dialect for a product name as JDBC's metadata reports it; null if unsupported. */
    static Dialect forProduct(String productName) {
        String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        if (p.contains("postgresql")) {
            return new Postgres();
        }
        if (p.contains("mysql") || p.contains("mariadb")) {
            return new MySql(productName);
        }
        if (p.equals("h2")) {
            return new H2();
        }
        if (p.contains("sqlite")) {
            return new Sqlite();
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------

    /** PostgreSQL: timestamptz columns, {@code now()} (the start of the statement's transaction). */
    static final class Postgres extends Dialect {
        @Override
        String product() {
            return "PostgreSQL";
        }

        @Override
        String now() {
            return "now()";
        }

        @Override
        StandardSql statements(String table) {
            return new PostgresSql(this, table);
        }

        /** pgjdbc's own query timeout woke its timer thread at every statement (see {@link SqlRunner}). */
        @Override
        boolean cancelsFromTimer() {
            return true;
        }

        @Override
        boolean notifies() {
            return true;
        }

        @Override
        String readOnlyQuery() {
            return "SELECT CASE WHEN pg_is_in_recovery() THEN 1 ELSE 0 END";
        }

        @Override
        String plusMillisParam(String ts) {
            return "(" + ts + " + make_interval(secs => CAST(? AS double precision) / 1000))";
        }

        @Override
        String millisBetween(String from, String to) {
            return "CAST(EXTRACT(EPOCH FROM (" + to + " - " + from + ")) * 1000 AS BIGINT)";
        }

        @Override
        String updateReturning(String update, String columns) {
            return update + " RETURNING " + columns;
        }

        @Override
        List<String> ddl(String table, String shared, String line) {
            return List.of(
                    "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                            + "  name_key     VARCHAR(64)   NOT NULL PRIMARY KEY,\n"
                            + "  name         VARCHAR(1024) NOT NULL,\n"
                            + "  token        BIGINT        NOT NULL,\n"
                            + "  owner        VARCHAR(512),\n"
                            + "  expires_at   TIMESTAMPTZ,\n"
                            + "  acquired_at  TIMESTAMPTZ,\n"
                            + "  lease_ms     BIGINT,\n"
                            + "  readers      INTEGER       NOT NULL,\n"
                            + "  shared_until TIMESTAMPTZ,\n"
                            + "  epoch        BIGINT        NOT NULL,\n"
                            + "  waiter       VARCHAR(512),\n"
                            + "  waiter_until TIMESTAMPTZ,\n"
                            + "  wanted_until TIMESTAMPTZ,\n"
                            + "  permits      INTEGER\n"
                            + ")",
                    "CREATE TABLE IF NOT EXISTS " + shared + " (\n"
                            + "  name_key     VARCHAR(64)   NOT NULL,\n"
                            + "  owner        VARCHAR(512)  NOT NULL,\n"
                            + "  epoch        BIGINT        NOT NULL,\n"
                            + "  token        BIGINT        NOT NULL,\n"
                            + "  expires_at   TIMESTAMPTZ   NOT NULL,\n"
                            + "  acquired_at  TIMESTAMPTZ   NOT NULL,\n"
                            + "  lease_ms     BIGINT        NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ")",
                    "CREATE TABLE IF NOT EXISTS " + line + " (\n"
                            + "  name_key     VARCHAR(64)   NOT NULL,\n"
                            + "  owner        VARCHAR(512)  NOT NULL,\n"
                            + "  ticket       BIGINT        NOT NULL,\n"
                            + "  writer       INTEGER       NOT NULL,\n"
                            + "  expires_at   TIMESTAMPTZ   NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ")");
        }
    }

    /**
     * MySQL and MariaDB (InnoDB): DATETIME(6) in UTC ({@code UTC_TIMESTAMP(6)}, never the session
     * time zone, which a DST change would move backwards); names in utf8mb4 with a binary
     * collation; the key is a SHA-256 so that 1024-character names fit InnoDB's 3072-byte key limit.
     * An UPDATE cannot return rows, so a grant's token comes back through
     * {@code LAST_INSERT_ID(expr)}, which the server reports with the update's result.
     */
    static final class MySql extends Dialect {
        private final String product;

        MySql(String product) {
            this.product = product;
        }

        @Override
        String product() {
            return product;
        }

        @Override
        String now() {
            return "UTC_TIMESTAMP(6)";
        }

        @Override
        String readOnlyQuery() {
            return "SELECT @@global.read_only";
        }

        @Override
        String plusMillisParam(String ts) {
            return "TIMESTAMPADD(MICROSECOND, ? * 1000, " + ts + ")";
        }

        @Override
        String millisBetween(String from, String to) {
            return "(TIMESTAMPDIFF(MICROSECOND, " + from + ", " + to + ") DIV 1000)";
        }

        @Override
        String updateReturning(String update, String columns) {
            return null;
        }

        @Override
        String nextToken(String tokenColumn) {
            return "LAST_INSERT_ID(" + tokenColumn + " + 1)";
        }

        @Override
        StandardSql statements(String table) {
            return new MySqlSql(this, table);
        }

        @Override
        boolean isDuplicateKey(SQLException e) {
            return e.getErrorCode() == 1062 || super.isDuplicateKey(e);
        }

        @Override
        boolean isMissingTable(SQLException e) {
            return e.getErrorCode() == 1146 || super.isMissingTable(e);
        }

        @Override
        boolean isMissingColumn(SQLException e) {
            return e.getErrorCode() == 1054 || super.isMissingColumn(e);
        }

        @Override
        List<String> ddl(String table, String shared, String line) {
            String key = "CHAR(64) CHARACTER SET ascii COLLATE ascii_bin";
            String text = "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
            return List.of(
                    "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                            + "  name_key     " + key + " NOT NULL PRIMARY KEY,\n"
                            + "  name         VARCHAR(1024) " + text + " NOT NULL,\n"
                            + "  token        BIGINT       NOT NULL,\n"
                            + "  owner        VARCHAR(512) " + text + ",\n"
                            + "  expires_at   DATETIME(6),\n"
                            + "  acquired_at  DATETIME(6),\n"
                            + "  lease_ms     BIGINT,\n"
                            + "  readers      INT          NOT NULL,\n"
                            + "  shared_until DATETIME(6),\n"
                            + "  epoch        BIGINT       NOT NULL,\n"
                            + "  waiter       VARCHAR(512) " + text + ",\n"
                            + "  waiter_until DATETIME(6),\n"
                            + "  permits      INT\n"
                            + ") ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS " + shared + " (\n"
                            + "  name_key     " + key + " NOT NULL,\n"
                            + "  owner        VARCHAR(512) " + text + " NOT NULL,\n"
                            + "  epoch        BIGINT       NOT NULL,\n"
                            + "  token        BIGINT       NOT NULL,\n"
                            + "  expires_at   DATETIME(6)  NOT NULL,\n"
                            + "  acquired_at  DATETIME(6)  NOT NULL,\n"
                            + "  lease_ms     BIGINT       NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ") ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS " + line + " (\n"
                            + "  name_key     " + key + " NOT NULL,\n"
                            + "  owner        VARCHAR(512) " + text + " NOT NULL,\n"
                            + "  ticket       BIGINT       NOT NULL,\n"
                            + "  writer       INT          NOT NULL,\n"
                            + "  expires_at   DATETIME(6)  NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ") ENGINE=InnoDB");
        }
    }

    /** H2 2.x: TIMESTAMP WITH TIME ZONE, {@code CURRENT_TIMESTAMP}; an UPDATE returns rows through {@code FINAL TABLE}. */
    static final class H2 extends Dialect {
        @Override
        String product() {
            return "H2";
        }

        @Override
        String now() {
            return "CURRENT_TIMESTAMP(6)";
        }

        @Override
        String plusMillisParam(String ts) {
            return "DATEADD(MILLISECOND, ?, " + ts + ")";
        }

        @Override
        String millisBetween(String from, String to) {
            return "DATEDIFF(MILLISECOND, " + from + ", " + to + ")";
        }

        @Override
        String updateReturning(String update, String columns) {
            return "SELECT " + columns + " FROM FINAL TABLE (" + update + ")";
        }

        @Override
        List<String> ddl(String table, String shared, String line) {
            String ts = "TIMESTAMP(6) WITH TIME ZONE";
            return List.of(
                    "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                            + "  name_key     VARCHAR(64)   NOT NULL PRIMARY KEY,\n"
                            + "  name         VARCHAR(1024) NOT NULL,\n"
                            + "  token        BIGINT        NOT NULL,\n"
                            + "  owner        VARCHAR(512),\n"
                            + "  expires_at   " + ts + ",\n"
                            + "  acquired_at  " + ts + ",\n"
                            + "  lease_ms     BIGINT,\n"
                            + "  readers      INTEGER       NOT NULL,\n"
                            + "  shared_until " + ts + ",\n"
                            + "  epoch        BIGINT        NOT NULL,\n"
                            + "  waiter       VARCHAR(512),\n"
                            + "  waiter_until " + ts + ",\n"
                            + "  permits      INTEGER\n"
                            + ")",
                    "CREATE TABLE IF NOT EXISTS " + shared + " (\n"
                            + "  name_key     VARCHAR(64)   NOT NULL,\n"
                            + "  owner        VARCHAR(512)  NOT NULL,\n"
                            + "  epoch        BIGINT        NOT NULL,\n"
                            + "  token        BIGINT        NOT NULL,\n"
                            + "  expires_at   " + ts + " NOT NULL,\n"
                            + "  acquired_at  " + ts + " NOT NULL,\n"
                            + "  lease_ms     BIGINT        NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ")",
                    "CREATE TABLE IF NOT EXISTS " + line + " (\n"
                            + "  name_key     VARCHAR(64)   NOT NULL,\n"
                            + "  owner        VARCHAR(512)  NOT NULL,\n"
                            + "  ticket       BIGINT        NOT NULL,\n"
                            + "  writer       INTEGER       NOT NULL,\n"
                            + "  expires_at   " + ts + " NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ")");
        }
    }

    /**
     * SQLite: times are INTEGER milliseconds since the epoch by SQLite's clock; a write
     * transaction locks the whole database, so there is no row lock to ask for.
     */
    static final class Sqlite extends Dialect {
        @Override
        String product() {
            return "SQLite";
        }

        @Override
        String now() {
            return "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
        }

        @Override
        String plusMillisParam(String ts) {
            return "(" + ts + " + ?)";
        }

        @Override
        String millisBetween(String from, String to) {
            return "(" + to + " - " + from + ")";
        }

        @Override
        String greatest(String a, String b) {
            return "MAX(" + a + ", " + b + ")";
        }

        @Override
        String updateReturning(String update, String columns) {
            return update + " RETURNING " + columns;
        }

        @Override
        boolean isDuplicateKey(SQLException e) {
            // SQLITE_CONSTRAINT (19); the driver sets no SQLState.
            return e.getErrorCode() == 19 || String.valueOf(e.getMessage()).contains("UNIQUE constraint failed");
        }

        @Override
        boolean isMissingTable(SQLException e) {
            return String.valueOf(e.getMessage()).contains("no such table");
        }

        @Override
        boolean isMissingColumn(SQLException e) {
            return String.valueOf(e.getMessage()).contains("no such column");
        }

        @Override
        boolean isRetryable(SQLException e) {
            return false; // SQLITE_BUSY after the busy timeout is reported, not retried here
        }

        @Override
        List<String> ddl(String table, String shared, String line) {
            return List.of(
                    "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                            + "  name_key     TEXT    NOT NULL PRIMARY KEY,\n"
                            + "  name         TEXT    NOT NULL,\n"
                            + "  token        INTEGER NOT NULL,\n"
                            + "  owner        TEXT,\n"
                            + "  expires_at   INTEGER,\n"
                            + "  acquired_at  INTEGER,\n"
                            + "  lease_ms     INTEGER,\n"
                            + "  readers      INTEGER NOT NULL,\n"
                            + "  shared_until INTEGER,\n"
                            + "  epoch        INTEGER NOT NULL,\n"
                            + "  waiter       TEXT,\n"
                            + "  waiter_until INTEGER,\n"
                            + "  permits      INTEGER\n"
                            + ")",
                    "CREATE TABLE IF NOT EXISTS " + shared + " (\n"
                            + "  name_key     TEXT    NOT NULL,\n"
                            + "  owner        TEXT    NOT NULL,\n"
                            + "  epoch        INTEGER NOT NULL,\n"
                            + "  token        INTEGER NOT NULL,\n"
                            + "  expires_at   INTEGER NOT NULL,\n"
                            + "  acquired_at  INTEGER NOT NULL,\n"
                            + "  lease_ms     INTEGER NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ")",
                    "CREATE TABLE IF NOT EXISTS " + line + " (\n"
                            + "  name_key     TEXT    NOT NULL,\n"
                            + "  owner        TEXT    NOT NULL,\n"
                            + "  ticket       INTEGER NOT NULL,\n"
                            + "  writer       INTEGER NOT NULL,\n"
                            + "  expires_at   INTEGER NOT NULL,\n"
                            + "  PRIMARY KEY (name_key, owner)\n"
                            + ")");
        }
    }
}
