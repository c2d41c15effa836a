package dev.interlock.jdbc;

import dev.interlock.LockBackendException;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Secrets;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;

/**
 * Turns a driver's {@link SQLException} into a {@link LockBackendException} whose message says
 * what went wrong and what to do about it, in the project's form: backend, name, what happened,
 * then the driver's own text and the SQLState. Never a Java class name.
 */
final class SqlFailures {
    private final String backend;
    private final Dialect dialect;
    private final String table;
    private final long timeoutMs;
    private final Secrets secrets;

    /**
     * @param secrets the passwords of the URL and properties, scrubbed from every driver message
     *     (a driver may echo them: MariaDB's "Incorrect port value : PASSWORD@host" for {@code //user:PASSWORD@host})
     */
    SqlFailures(String backend, Dialect dialect, String table, long timeoutMs, Secrets secrets) {
        this.secrets = secrets;
        this.backend = backend;
        this.dialect = dialect;
        this.table = table;
        this.timeoutMs = timeoutMs;
    }

    /** True if the same call may succeed later: the server was unreachable, slow, busy or restarting. */
    boolean isTransient(SQLException e) {
        return dialect.isConnectionError(e) || dialect.isRetryable(e) || isTimeout(e) || isBusy(e);
    }

    private static boolean isTimeout(SQLException e) {
        return e instanceof SQLTimeoutException || "57014".equals(e.getSQLState()) || "HYT00".equals(e.getSQLState());
    }

    private static boolean isBusy(SQLException e) {
        int code = e.getErrorCode();
        return (code == 5 || code == 6) && String.valueOf(e.getMessage()).contains("SQLITE_");
    }

    private boolean isReadOnly(SQLException e) {
        String s = e.getSQLState();
        int code = e.getErrorCode();
        String m = String.valueOf(e.getMessage());
        return "25006".equals(s)
                || code == 1290
                || code == 1792
                || code == 90097
                || m.contains("SQLITE_READONLY")
                || m.contains("read-only")
                || m.contains("read only");
    }

    private static boolean isCredentials(SQLException e) {
        String s = e.getSQLState();
        return (s != null && s.startsWith("28")) || e.getErrorCode() == 1045 || e.getErrorCode() == 28000;
    }

    /** What {@code e} means for a user, without the operation. */
    String explain(SQLException e) {
        String text = driverText(e);
        if (isCredentials(e)) {
            return "the database refused the user name or password: " + text;
        }
        if (dialect.isConnectionError(e)) {
            return "cannot reach the database: " + text;
        }
        if (isTimeout(e)) {
            return "the database did not answer within " + timeoutMs + "ms: " + text;
        }
        if (isReadOnly(e)) {
            return "the database is read-only (a replica, or a read-only mount); point the URL at a writable primary: "
                    + text;
        }
        if (dialect.isMissingTable(e)) {
            return "the lock table " + table
                    + " does not exist; create it with the DDL in docs/jdbc.md, or add ?create=true: " + text;
        }
        if (dialect.isMissingColumn(e)) {
            return "the lock table " + table + " does not have the expected columns; see docs/jdbc.md for its shape: "
                    + text;
        }
        if (isBusy(e)) {
            return "the database file stayed locked by another connection: " + text;
        }
        return text;
    }

    /** The driver's message with its SQLState, or the SQLState alone when the driver gave no text; secrets scrubbed. */
    String driverText(SQLException e) {
        return secrets.scrub(rawDriverText(e));
    }

    private static String rawDriverText(SQLException e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) {
            Throwable c = e.getCause();
            m = c != null && c.getMessage() != null ? c.getMessage() : "no message from the driver";
        }
        m = m.strip();
        return e.getSQLState() != null ? m + " (SQLState " + e.getSQLState() + ")" : m;
    }

    /** {@code "<backend> - <what> '<name>' failed: <explanation>"}. */
    LockBackendException map(String what, String name, SQLException e) {
        String subject = name == null ? what : what + " " + LockNames.quote(name);
        return new LockBackendException(
                backend, name, backend + " - " + subject + " failed: " + explain(e), e, isTransient(e));
    }
}
