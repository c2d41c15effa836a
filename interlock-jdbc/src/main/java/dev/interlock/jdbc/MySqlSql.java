package dev.interlock.jdbc;

import dev.interlock.jdbc.LockStore.Granted;
import dev.interlock.jdbc.LockStore.Outcome;
import dev.interlock.jdbc.NamedSql.Args;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * MySQL's and MariaDB's forms of a permit's try and of a shared release: each one text of
 * statements ({@code START TRANSACTION; ...; COMMIT}) in one round trip, where the
 * standard forms take eight and five (each statement, the commit, and the driver's two
 * {@code set autocommit} around the transaction). The decision stays on the server, in user
 * variables of the session ({@code @interlock_...}), and the writes after it are conditional on
 * it. The transaction is a statement of the text, not the connection's autocommit mode, so it is
 * one transaction however the driver sends the text; a driver that refuses texts of several
 * statements (no {@code allowMultiQueries}: the server reports a syntax error and runs nothing)
 * is found out at the first try, and every later operation takes the standard form
 * (docs/jdbc.md, "Semaphores").
 */
final class MySqlSql extends StandardSql {
    /** MySQL's and MariaDB's code for a syntax error: what a text of several statements gets from a connection that does not allow them. */
    private static final int PARSE_ERROR = 1064;
    /** MySQL's and MariaDB's code for NULL in a NOT NULL column: a refused permit try's holder row. */
    private static final int BAD_NULL = 1048;
    /** The decision of the last permit try on the connection. */
    private static final String ANSWER =
            "SELECT @interlock_grant, @interlock_token, @interlock_epoch, @interlock_permits,"
                    + " @interlock_ex, @interlock_sh, @interlock_force, @interlock_ahead";
    /** How many statements {@link #releaseText} has, and which of them counts the holder out (from 0). */
    private static final int RELEASE_STATEMENTS = 6;

    private static final int RELEASE_COUNT = 4;

    /**
     * A permit of a name whose permits are all back ({@link StandardSql#tryPermit}): its UPDATE,
     * whose token (also the epoch) LAST_INSERT_ID() reports, the holder's row (which stops the
     * text where the UPDATE did not grant), the commit, the answer. A try not in line sends it
     * first, unless this space last found the name held by others ({@link PermitsInUse}).
     */
    private final NamedSql allBackText;
    /** A permit try: the name's row lock (making its row on first use), the decision, the writes it allows, the commit, the answer. */
    private final NamedSql permitText;
    /** {@link #permitText} after an {@link #allBackText} that stopped: its transaction rolled back first. */
    private final NamedSql permitTextAfterAllBack;
    /** As {@link #permitText}, for a waiter in the name's line (which sends no {@link #allBackText}): its place taken out too. */
    private final NamedSql permitTextInLine;
    /** After a refused permit try: its transaction ended, and its decision read. */
    private final NamedSql refusedText = NamedSql.of("ROLLBACK; " + ANSWER);
    /** A shared holder's release: the name's row lock, the holder's row, the count taken down if that row was there, the commit. */
    private final NamedSql releaseText;
    /** Set once the connections refused a text of several statements: from then on, the standard forms. */
    private volatile boolean oneStatementPerText;

    MySqlSql(Dialect dialect, String table) {
        super(dialect, table);
        String t = table;
        String s = shared;
        String n = now;
        String granted = " AND @interlock_grant = 1";
        // The row lock first, as in every transaction of the store; a new name's row is made free (token and epoch 0).
        String lockRow = "INSERT INTO " + t + " (" + String.join(", ", LOCK_COLUMNS) + ")"
                + " VALUES (:key, :name, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, NULL)"
                + " ON DUPLICATE KEY UPDATE token = token";
        // The first consistent read of the transaction, so it starts after the row lock is held and
        // counts every grant committed before (as permitInTransaction's does); then the decision,
        // from the variables (a derived table around the read cost MariaDB more than this SET).
        String in = "(@interlock_sh = 1 AND @interlock_live > 0)";
        String decide = permitRow.named
                + " INTO @interlock_row_token, @interlock_row_epoch, @interlock_permits, @interlock_ex, @interlock_sh,"
                + " @interlock_live, @interlock_ahead; "
                + "SET @interlock_token = @interlock_row_token + 1,"
                + " @interlock_force = CASE WHEN " + in + " THEN 1 ELSE 0 END,"
                + " @interlock_epoch = CASE WHEN " + in
                + " THEN @interlock_row_epoch ELSE @interlock_row_epoch + 1 END,"
                + " @interlock_grant = CASE WHEN @interlock_ex = 0 AND NOT (@interlock_sh = 1 AND @interlock_permits = 0)"
                + " AND NOT (" + in + " AND @interlock_permits <> :limit)"
                + " AND (CASE WHEN " + in + " THEN @interlock_live ELSE 0 END) + @interlock_ahead < :limit"
                + " THEN 1 ELSE 0 END";
        String later = plusLease;
        // The holder's row comes right after the decision, and a refusal ends the text there: NULL
        // in its NOT NULL owner fails a single-row INSERT in every sql_mode, so nothing after it
        // runs (the caller rolls back). A plain INSERT ... VALUES: MariaDB 11.4 writes its redo log
        // twice at the commit of a transaction with an INSERT ... SELECT (one more fsync per grant).
        // Should a server ever store the row anyway, it is born expired: never live, purged by
        // the next grant.
        String holder = "INSERT INTO " + s + " (" + String.join(", ", SHARED_COLUMNS) + ") VALUES (:key,"
                + " IF(@interlock_grant = 1, :owner, NULL), @interlock_epoch, @interlock_token,"
                + " IF(@interlock_grant = 1, " + later + ", " + n + "), " + n + ", :lease)";
        String writes = holder + "; "
                + "DELETE FROM " + s + " WHERE name_key = :key" + granted + " AND owner <> :owner"
                + " AND (epoch < @interlock_epoch OR expires_at <= " + n + "); "
                // shared_until first: MySQL assigns left to right, and nothing after it reads it.
                + "UPDATE " + t + " SET shared_until = CASE WHEN shared_until IS NOT NULL AND shared_until > " + n
                + " THEN " + dialect.greatest("shared_until", later) + " ELSE " + later + " END,"
                + " readers = (SELECT COUNT(*) FROM " + s + " WHERE name_key = :key AND epoch = @interlock_epoch),"
                + " token = @interlock_token, epoch = @interlock_epoch, permits = :limit,"
                + " owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                + " WHERE name_key = :key" + granted + "; ";
        // A read that found no row would leave the last try's values behind: with @interlock_ex NULL, the decision
        // refuses.
        String head = "START TRANSACTION; SET @interlock_ex = NULL; " + lockRow + "; " + decide + "; " + writes;
        String tail = "COMMIT; " + ANSWER;
        permitText = NamedSql.of(head + tail);
        permitTextAfterAllBack = NamedSql.of("ROLLBACK; " + head + tail);
        allBackText = NamedSql.of("START TRANSACTION; "
                + permitAllBack.named + "; "
                // Each value from the functions: MariaDB evaluates a SET's values before it assigns any.
                + "SET @interlock_grant = ROW_COUNT(), @interlock_token = LAST_INSERT_ID(),"
                + " @interlock_epoch = LAST_INSERT_ID(); "
                + holder + "; "
                + tail);
        // A waiter's grant also takes its place out of the line, with the places that ran out.
        permitTextInLine = NamedSql.of(head + "DELETE FROM " + line + " WHERE name_key = :key" + granted
                + " AND (owner = :owner OR expires_at <= " + n + "); " + tail);
        // The row lock first, as in every transaction of the store (a permit try's purge would wait for
        // the holder's row while this release waits for the row lock). Then the holder's row decides:
        // whoever deletes it (release or break) is the one who counts it out.
        releaseText = NamedSql.of("START TRANSACTION; "
                + "UPDATE " + t + " SET token = token WHERE name_key = :key; "
                + shReleaseHolder.named + "; "
                + "SET @interlock_released = ROW_COUNT(); "
                + shReleaseLock.named + " AND @interlock_released = 1; "
                + "COMMIT");
    }

    /**
     * One round trip for a grant where the standard form takes eight, two for a refusal (the
     * text stops at the holder's row; its transaction is rolled back and its decision read, in
     * one more text) where it takes five (docs/jdbc.md, "Semaphores"). The grant is committed
     * before the answer is read: the answer is the text's last statement, after the COMMIT. A try
     * that is not in line sends {@link #allBackText} first (unless others held the name at the
     * last look), and the full text only where that stopped (one round trip more).
     */
    @Override
    Outcome tryPermit(SqlRunner r, Connection c, Args a, PermitsInUse inUse) throws SQLException {
        boolean inLine = a.ticket() != LockStore.NOT_IN_LINE;
        boolean allBackSent = !oneStatementPerText && !inLine && !inUse.byOthers(a.key());
        if (allBackSent) {
            Granted granted = run(r, c, allBackText, a, null);
            if (granted != null) {
                return granted;
            }
        }
        if (!oneStatementPerText) {
            NamedSql full = inLine ? permitTextInLine : allBackSent ? permitTextAfterAllBack : permitText;
            Granted granted = run(r, c, full, a, inUse);
            if (granted != null) {
                return granted;
            }
            if (!oneStatementPerText) {
                inUse.decided(a.key(), false, false, false);
                return refused(r, c, a);
            }
        }
        return super.tryPermit(r, c, a, inUse);
    }

    /**
     * Runs a permit try's text: its grant, or null where it stopped at the holder's row (its
     * transaction left open) or where the connection refused a text of several statements (then
     * {@link #oneStatementPerText} is set and nothing ran). A full text's grant tells
     * {@code inUse} (null for the all-back text) whether others held the name or waited.
     */
    private Granted run(SqlRunner r, Connection c, NamedSql text, Args a, PermitsInUse inUse) throws SQLException {
        try (PreparedStatement ps = r.prepareText(c, text, a)) {
            ResultSet rs;
            try {
                rs = r.queryAfterCounts(ps);
            } catch (SQLException e) {
                if (e.getErrorCode() == BAD_NULL) {
                    return null;
                }
                rollBack(c, e);
                if (e.getErrorCode() != PARSE_ERROR) {
                    throw e;
                }
                oneStatementPerText = true;
                return null;
            }
            try (rs) {
                if (!rs.next() || rs.getInt(1) != 1) {
                    throw new SQLException("a permit try committed without a grant");
                }
                if (inUse != null) { // a full decision's answer: were others holding or waiting?
                    inUse.decided(a.key(), true, rs.getInt(7) == 1, rs.getLong(8) > 0);
                }
                return new Granted(rs.getLong(2), rs.getLong(3));
            }
        }
    }

    /** After a permit try's text stopped at its holder's row: rolls it back and reads why it refused. */
    private Outcome refused(SqlRunner r, Connection c, Args a) throws SQLException {
        try (PreparedStatement ps = r.prepareText(c, refusedText, a);
                ResultSet rs = r.queryAfterCounts(ps)) {
            if (!rs.next() || rs.getInt(1) != 0) {
                throw new SQLException("a permit try's holder row was refused though its decision granted");
            }
            return refusal(rs.getInt(5) == 1, rs.getInt(6) == 1, rs.getInt(7) == 1, rs.getInt(4), a.limit());
        } catch (SQLException e) {
            rollBack(c, e);
            throw e;
        }
    }

    /** One round trip where the standard form takes five. */
    @Override
    boolean releaseShared(SqlRunner r, Connection c, Args a) throws SQLException {
        if (!oneStatementPerText) {
            try (PreparedStatement ps = r.prepareText(c, releaseText, a)) {
                int[] counts = r.counts(ps);
                if (counts.length != RELEASE_STATEMENTS) {
                    throw new SQLException("a release gave " + counts.length + " results for its " + RELEASE_STATEMENTS
                            + " statements");
                }
                return counts[RELEASE_COUNT] == 1; // only after its row was deleted, and of the row's epoch
            } catch (SQLException e) {
                rollBack(c, e);
                if (e.getErrorCode() != PARSE_ERROR) {
                    throw e;
                }
                oneStatementPerText = true;
            }
        }
        return super.releaseShared(r, c, a);
    }

    /**
     * Ends the transaction a text began and did not commit: the connection stays in autocommit
     * mode, so neither the store nor a pool would end it, and a statement that failed on a lock
     * wait's timeout leaves it open.
     */
    private static void rollBack(Connection c, SQLException failure) {
        try (Statement st = c.createStatement()) {
            st.execute("ROLLBACK");
        } catch (SQLException again) {
            failure.addSuppressed(again); // the runner throws the connection away, which ends the transaction
        }
    }
}
