package dev.interlock.jdbc;

import dev.interlock.spi.support.BackendFailures;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The store's three tables at open: created if the options say so, then checked to exist with
 * every column the statements use, so that a wrong table is an error that says what to fix
 * before any lock is taken, never a failed statement later.
 */
final class LockTables {
    private final StandardSql sql;
    private final SqlRunner runner;
    private final SqlFailures failures;
    private final BackendFailures refusals;

    LockTables(StandardSql sql, SqlRunner runner, SqlFailures failures, BackendFailures refusals) {
        this.sql = sql;
        this.runner = runner;
        this.failures = failures;
        this.refusals = refusals;
    }

    /**
     * Checks that the tables exist with the expected columns, creating them first if
     * {@code create}.
     *
     * @param deferred the URL asks for creation, but the space was opened only to read
     *     ({@link dev.interlock.Interlock#CREATE_NOTHING}): a missing table is named as not created yet
     * @throws dev.interlock.LockBackendException naming the missing table or columns
     */
    void check(boolean create, boolean deferred) {
        runner.call("opening the lock table", null, true, c -> {
            if (create) {
                for (String ddl : sql.dialect.ddl(sql.table, sql.shared, sql.line)) {
                    try (Statement st = c.createStatement()) {
                        st.setQueryTimeout(runner.queryTimeoutSeconds);
                        st.execute(ddl);
                    } catch (SQLException e) {
                        // Another process creating the same table at the same moment: PostgreSQL's IF NOT
                        // EXISTS is not safe against a concurrent CREATE and reports a duplicate key in its
                        // catalog (23505), a duplicate table (42P07) or a duplicate type (42710, "type ...
                        // already exists"). Fine if the table is there now, checked below.
                        String state = e.getSQLState();
                        if (!sql.dialect.isDuplicateKey(e) && !"42P07".equals(state) && !"42710".equals(state)) {
                            throw e;
                        }
                    }
                }
            }
            if (create) {
                addPermitsColumn(c);
            }
            checkShape(c, sql.table, sql.lockColumns(), create, deferred);
            checkShape(c, sql.shared, StandardSql.SHARED_COLUMNS, create, deferred);
            checkShape(c, sql.line, StandardSql.LINE_COLUMNS, create, deferred);
            return null;
        });
    }

    /**
     * A lock table made before semaphores has no {@code permits} column: with {@code create=true}
     * it is added (nullable, so no row is rewritten and older builds go on working beside this
     * one); another process adding it at the same moment is fine.
     */
    private void addPermitsColumn(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(runner.queryTimeoutSeconds);
            try (ResultSet rs = st.executeQuery("SELECT * FROM " + sql.table + " WHERE 1 = 0")) {
                ResultSetMetaData md = rs.getMetaData();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    if (md.getColumnName(i).equalsIgnoreCase(StandardSql.PERMITS_COLUMN)) {
                        return;
                    }
                }
            } catch (SQLException e) {
                if (sql.dialect.isMissingTable(e)) {
                    return; // checked below, with the message that says what to do
                }
                throw e;
            }
            try {
                st.execute(alterAddPermits());
            } catch (SQLException e) {
                // Added by another process since we looked: checked below.
                if (!sql.dialect.isDuplicateColumn(e)) {
                    throw e;
                }
            }
        }
    }

    private String alterAddPermits() {
        return "ALTER TABLE " + sql.table + " ADD COLUMN " + StandardSql.PERMITS_COLUMN_DDL;
    }

    private void checkShape(Connection c, String name, List<String> wanted, boolean created, boolean deferred)
            throws SQLException {
        Set<String> have = new HashSet<>();
        int nameWidth = -1;
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(runner.queryTimeoutSeconds);
            try (ResultSet rs = st.executeQuery("SELECT * FROM " + name + " WHERE 1 = 0")) {
                ResultSetMetaData md = rs.getMetaData();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    String col = md.getColumnName(i).toLowerCase(Locale.ROOT);
                    have.add(col);
                    if (col.equals("name") && name.equals(sql.table)) {
                        nameWidth = md.getPrecision(i);
                    }
                }
            }
        } catch (SQLException e) {
            if (sql.dialect.isMissingTable(e) && name.equals(sql.line) && !created && !deferred) {
                // The lock table itself was found (it is checked first): it comes from before the line.
                throw refusals.refused(
                        null,
                        "the lock table " + sql.table
                                + " was created by an earlier Interlock and has no waiting line " + sql.line
                                + "; create it with the DDL for "
                                + sql.dialect.product() + " in docs/jdbc.md, or add ?create=true to the URL",
                        e);
            }
            if (sql.dialect.isMissingTable(e) && deferred) {
                throw refusals.refused(
                        null,
                        "no lock table " + name
                                + " (nothing was created: reading creates nothing; with ?create=true the first lock creates it)",
                        e);
            }
            if (sql.dialect.isMissingTable(e)) {
                throw refusals.refused(
                        null,
                        "the lock table " + name
                                + " does not exist" + (created ? " although it was just created" : "")
                                + "; create it with the DDL for " + sql.dialect.product()
                                + " in docs/jdbc.md, or add ?create=true to the URL ("
                                + failures.driverText(e) + ")",
                        e);
            }
            throw e;
        }
        List<String> missing = new ArrayList<>();
        for (String w : wanted) {
            if (!have.contains(w)) {
                missing.add(w);
            }
        }
        if (missing.equals(List.of(StandardSql.PERMITS_COLUMN))) {
            throw refusals.refused(
                    null,
                    "the lock table " + name
                            + " was created by an earlier Interlock and lacks the column " + StandardSql.PERMITS_COLUMN
                            + " (semaphores); add it with: " + alterAddPermits() + ", or add ?create=true to the URL",
                    null);
        }
        if (missing.contains(StandardSql.PERMITS_COLUMN)
                && missing.contains(PostgresSql.WANTED_COLUMN)
                && missing.size() == 2) {
            throw refusals.refused(
                    null,
                    "the lock table " + name
                            + " was created by an earlier Interlock and lacks the columns " + PostgresSql.WANTED_COLUMN
                            + " and " + StandardSql.PERMITS_COLUMN + "; add them with: ALTER TABLE " + name
                            + " ADD COLUMN " + PostgresSql.WANTED_COLUMN + " TIMESTAMPTZ; " + alterAddPermits(),
                    null);
        }
        if (missing.equals(List.of(PostgresSql.WANTED_COLUMN))) {
            throw refusals.refused(
                    null,
                    "the lock table " + name
                            + " was created by an earlier Interlock and lacks the column " + PostgresSql.WANTED_COLUMN
                            + "; add it with: ALTER TABLE " + name
                            + " ADD COLUMN " + PostgresSql.WANTED_COLUMN + " TIMESTAMPTZ",
                    null);
        }
        if (!missing.isEmpty()) {
            throw refusals.refused(
                    null,
                    "the table " + name
                            + " is not an Interlock lock table: it lacks the columns " + String.join(", ", missing)
                            + "; use another table name (?table=...) or create it with the DDL in docs/jdbc.md",
                    null);
        }
        if (nameWidth > 0 && nameWidth < 1024) {
            throw refusals.refused(
                    null,
                    "the column " + sql.table + ".name holds " + nameWidth
                            + " characters; lock names may be 1024 long: widen it (see docs/jdbc.md)",
                    null);
        }
    }
}
