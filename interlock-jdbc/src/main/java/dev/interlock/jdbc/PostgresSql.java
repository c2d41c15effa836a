package dev.interlock.jdbc;

import dev.interlock.jdbc.LockStore.Busy;
import dev.interlock.jdbc.LockStore.Granted;
import dev.interlock.jdbc.LockStore.Mark;
import dev.interlock.jdbc.LockStore.Outcome;
import dev.interlock.jdbc.NamedSql.Args;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * PostgreSQL's forms of the store's operations: each one statement in one round trip
 * ({@code INSERT ... ON CONFLICT DO UPDATE ... WHERE}, data-modifying {@code WITH}; a permit try,
 * two statements sent together in one round trip and one transaction), grants and
 * renewals committed synchronously and releases asynchronously whatever the session says
 * (docs/jdbc.md, "Synchronous commit"), and releases that notify the name's waiters while the row
 * is wanted.
 */
final class PostgresSql extends StandardSql {
    /** Until when someone may be waiting for a notification of the name's release. */
    static final String WANTED_COLUMN = "wanted_until";

    private static final String INTERVAL = "make_interval(secs => CAST(:lease AS double precision) / 1000)";
    /**
     * A release commits asynchronously: a release lost in a server crash only keeps the lock until
     * its lease runs out (the holder no longer renews it), and the next grant's synchronous commit
     * flushes the WAL up to it anyway. It saves each cycle one of its two WAL flushes.
     */
    private static final String ASYNC = " AND set_config('synchronous_commit', 'off', true) IS NOT NULL";

    private final NamedSql exclusive;
    private final NamedSql sharedJoin;
    private final NamedSql exclusiveInLine;
    private final NamedSql sharedJoinInLine;
    private final NamedSql renewShared;
    private final NamedSql releaseShared;
    private final NamedSql releaseExclusive;
    private final NamedSql unqueueNotifying;
    private final NamedSql lineLeaveNotifying;
    private final NamedSql markWriter;
    private final NamedSql markReader;
    /**
     * A transaction-local setting: the key of the row that a permit try's first statement locked,
     * so that its decision knows whether its own transaction holds that lock.
     */
    static final String LOCKED_ROW = "interlock.locked_row";

    /** A permit of a name whose permits are all back, with its holder's row: one statement (see {@link #tryPermit}). */
    private final NamedSql permitAllBackWithHolder;
    /** A permit try: the name's row lock, then the decision and every write, sent together (see {@link #tryPermit}). */
    private final NamedSql permitLockAndDecide;
    /**
     * Set once a permit try's two statements were committed apart (pgjdbc's
     * {@code preferQueryMode=simple} sends each as a query of its own): from then on each try is an
     * explicit transaction.
     */
    private volatile boolean committedApart;

    PostgresSql(Dialect dialect, String table) {
        super(dialect, table);
        String t = table;
        String s = shared;
        String ch = "'" + channel() + "'";
        String insertHead = "INSERT INTO " + t + " AS t (" + String.join(", ", LOCK_COLUMNS) + ") ";
        exclusive = NamedSql.of(insertHead
                + "SELECT :key, :name, 1, :owner, now() + " + INTERVAL + ", now(), :lease, 0, NULL, 1, NULL, NULL"
                + " WHERE set_config('synchronous_commit', 'on', true) IS NOT NULL"
                + " ON CONFLICT (name_key) DO UPDATE SET"
                + " epoch = CASE WHEN t.shared_until IS NOT NULL THEN t.epoch + 1 ELSE t.epoch END,"
                + " token = t.token + 1, owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,"
                + " acquired_at = EXCLUDED.acquired_at, lease_ms = EXCLUDED.lease_ms,"
                + " readers = 0, shared_until = NULL, waiter = NULL, waiter_until = NULL, permits = NULL"
                + " WHERE t.name = EXCLUDED.name"
                + " AND (t.owner IS NULL OR t.expires_at <= now())"
                + " AND (t.shared_until IS NULL OR t.shared_until <= now())"
                + " AND (t.waiter IS NULL OR t.waiter = EXCLUDED.owner OR t.waiter_until <= now())"
                + lineClear(true)
                + " RETURNING t.token");
        sharedJoin = NamedSql.of("WITH n AS (" + insertHead
                + "SELECT :key, :name, 1, NULL, NULL, NULL, NULL, 1, now() + " + INTERVAL + ", 1, NULL, NULL"
                + " WHERE set_config('synchronous_commit', 'on', true) IS NOT NULL"
                + " ON CONFLICT (name_key) DO UPDATE SET"
                + " epoch = CASE WHEN t.shared_until <= now() THEN t.epoch + 1 ELSE t.epoch END,"
                + " readers = CASE WHEN t.shared_until IS NULL OR t.shared_until <= now() THEN 1 ELSE t.readers + 1 END,"
                + " shared_until = CASE WHEN t.shared_until IS NULL OR t.shared_until <= now() THEN EXCLUDED.shared_until"
                + " ELSE GREATEST(t.shared_until, EXCLUDED.shared_until) END,"
                + " token = t.token + 1, owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL,"
                + " permits = NULL"
                + " WHERE t.name = EXCLUDED.name"
                + " AND (t.owner IS NULL OR t.expires_at <= now())"
                + " AND (t.waiter IS NULL OR t.waiter_until <= now())"
                + " AND (t.permits IS NULL OR t.permits = 0 OR t.shared_until IS NULL OR t.shared_until <= now())"
                + lineClear(false)
                + " RETURNING t.token, t.epoch, t.readers),"
                + " h AS (INSERT INTO " + s + " (" + String.join(", ", SHARED_COLUMNS) + ")"
                + " SELECT CAST(:key AS VARCHAR), CAST(:owner AS VARCHAR), n.epoch, n.token, now() + " + INTERVAL
                + ", now(),"
                + " CAST(:lease AS BIGINT) FROM n),"
                + " d AS (DELETE FROM " + s
                + " WHERE name_key = :key AND epoch < (SELECT epoch FROM n WHERE n.readers = 1))"
                + " SELECT token, epoch FROM n");
        // A waiter's grant takes its place out of the line (and the places that ran out) in the same statement.
        String served = "DELETE FROM " + line + " WHERE name_key = :key AND (owner = :owner OR expires_at <= now())";
        exclusiveInLine = NamedSql.of("WITH g AS (" + exclusive.named + "), l AS (" + served
                + " AND EXISTS (SELECT 1 FROM g))" + " SELECT token FROM g");
        String join = sharedJoin.named;
        int select = join.lastIndexOf(" SELECT token, epoch FROM n");
        sharedJoinInLine = NamedSql.of(join.substring(0, select) + ", l AS (" + served
                + " AND EXISTS (SELECT 1 FROM n))" + join.substring(select));
        renewShared = NamedSql.of("WITH u AS (" + shRenewLock.named + " RETURNING epoch),"
                + " r AS (UPDATE " + s + " SET expires_at = now() + " + INTERVAL + ", lease_ms = :lease"
                + " WHERE name_key = :key AND owner = :owner AND epoch = (SELECT epoch FROM u) AND expires_at > now() RETURNING token)"
                + " SELECT count(*) FROM r");
        // The holder's row first: whoever deletes it (release or break) is the one who counts it out, and only a
        // holder of the row's epoch is counted (one whose epoch moved on was no longer held: nothing released).
        // A permit freed is one a waiter can take; a reader's, only once the last reader leaves.
        releaseShared = NamedSql.of(notifying(
                "WITH d AS (DELETE FROM " + s + " WHERE name_key = :key AND owner = :owner" + ASYNC
                        + " RETURNING epoch)"
                        + " UPDATE " + t + " SET shared_until = CASE WHEN readers = 1 THEN NULL ELSE shared_until END,"
                        + " readers = readers - 1"
                        + " WHERE name_key = :key AND readers > 0 AND epoch = (SELECT epoch FROM d)",
                "readers = 1 OR COALESCE(permits, 0) > 0",
                ch));
        releaseExclusive = NamedSql.of(notifying(exRelease.named + ASYNC, ch));
        unqueueNotifying = NamedSql.of(notifying(unqueue.named, ch));
        lineLeaveNotifying = NamedSql.of(lineLeave.named + " AND pg_notify(" + ch + ", name_key) IS NOT NULL");
        String wanted = "wanted_until = GREATEST(COALESCE(wanted_until, now()), now() + " + INTERVAL + ")";
        String freeOfHolder = "(owner IS NULL OR expires_at <= now())";
        String mayQueue = "((waiter IS NULL OR waiter = :owner OR waiter_until <= now())" + lineClear(true) + ")";
        markWriter = NamedSql.of("UPDATE " + t + " SET " + wanted + ","
                + " waiter = CASE WHEN " + mayQueue + " THEN CAST(:owner AS VARCHAR) ELSE waiter END,"
                + " waiter_until = CASE WHEN " + mayQueue + " THEN now() + " + INTERVAL + " ELSE waiter_until END"
                + " WHERE name_key = :key"
                + " RETURNING waiter = :owner, " + freeOfHolder
                + " AND (shared_until IS NULL OR shared_until <= now())");
        // The row lock, made by creating the row on the name's first use (free: token and epoch 0). Its
        // commit is asynchronous unless the decision grants (permitDecideSql): a busy try writes nothing to keep.
        String lockRow = insertHead
                + "SELECT :key, :name, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, NULL"
                + " WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL"
                + " AND set_config('" + LOCKED_ROW + "', :key, true) IS NOT NULL"
                + " ON CONFLICT (name_key) DO UPDATE SET token = t.token";
        permitLockAndDecide = NamedSql.of(lockRow + "; " + permitDecideSql(t, s, line));
        // The standard permitAllBack: a plain UPDATE locks no row it does not change, so a try it does not grant
        // writes nothing and commits without waiting for the disk (an INSERT ... ON CONFLICT would lock the row,
        // a WAL record, and its synchronous commit would wait for a flush at every busy try).
        permitAllBackWithHolder = NamedSql.of("WITH g AS (" + permitAllBack.named + " RETURNING token, epoch),"
                + " h AS (INSERT INTO " + s + " (" + String.join(", ", SHARED_COLUMNS) + ")"
                + " SELECT CAST(:key AS VARCHAR), CAST(:owner AS VARCHAR), g.epoch, g.token, now() + " + INTERVAL
                + ", now(), CAST(:lease AS BIGINT) FROM g)"
                + " SELECT token, epoch FROM g");
        markReader = NamedSql.of("UPDATE " + t + " SET " + wanted + " WHERE name_key = :key" + " RETURNING FALSE, "
                + freeOfHolder + " AND (waiter IS NULL OR waiter_until <= now())");
    }

    /**
     * The data-modifying WITH of a permit try, run after the name's row lock (a statement that
     * starts after the lock sees every grant committed before it; one that waited for the lock
     * would count holders on its older snapshot). {@code r}: the row, its live holders and the
     * places before ours; {@code g}: one row if granted; the writes run only if {@code g} has it.
     * Within one statement the DELETE of holders that ran out is not seen by the other parts, so
     * {@code readers} comes from the count of live holders, not from a count after it. Nothing is
     * granted unless this transaction holds the row lock ({@code locked}: the first statement's
     * {@link #LOCKED_ROW} is still set), and a grant makes the transaction commit synchronously
     * (the last column). Every column is of a fixed width: pgjdbc sends a Sync before a statement
     * whose row it cannot bound (a text column, once the statement is described), which would
     * commit the row lock's statement on its own.
     *
     * <p>A name's holder rows are read only when they can matter, because every release leaves a
     * dead row version that an index scan of the name walks until VACUUM (docs/benchmarks.md,
     * "Where a PostgreSQL permit's time goes"). The live holders are counted only while
     * {@code shared_until} says someone may hold. The clean-up {@code p} is skipped when the row
     * says there is nothing to clean ({@code no_rows}: {@code permits} set and {@code readers}
     * 0, which by {@link LockStore}'s invariants means no row of the name).
     */
    private static String permitDecideSql(String t, String s, String line) {
        String later = "now() + " + INTERVAL;
        return "WITH r AS (SELECT t.token, t.epoch, COALESCE(t.permits, 0) AS permits,"
                + " (t.owner IS NOT NULL AND t.expires_at > now()) AS ex_held,"
                + " (t.shared_until IS NOT NULL AND t.shared_until > now()) AS sh_held,"
                + " CASE WHEN t.shared_until IS NOT NULL AND t.shared_until > now() THEN (SELECT count(*) FROM " + s
                + " h WHERE h.name_key = :key AND h.epoch = t.epoch AND h.expires_at > now()) ELSE 0 END AS live,"
                + " COALESCE(t.permits > 0 AND t.readers = 0, FALSE) AS no_rows,"
                + " (SELECT count(*) FROM " + line + " q WHERE q.name_key = :key AND q.expires_at > now()"
                + " AND (q.ticket < :ticket OR (q.ticket = :ticket AND q.owner < :owner))) AS ahead,"
                + " COALESCE(current_setting('" + LOCKED_ROW + "', true), '') = CAST(:key AS VARCHAR) AS locked"
                + " FROM " + t + " t WHERE t.name_key = :key),"
                + " v AS (SELECT r.*, (r.sh_held AND r.live > 0) AS in_force FROM r),"
                + " g AS (SELECT v.token + 1 AS token,"
                + " CASE WHEN v.in_force THEN v.epoch ELSE v.epoch + 1 END AS epoch,"
                + " CASE WHEN v.in_force THEN v.live + 1 ELSE 1 END AS readers, v.no_rows FROM v"
                + " WHERE v.locked AND NOT v.ex_held AND NOT (v.sh_held AND v.permits = 0)"
                + " AND NOT (v.in_force AND v.permits <> CAST(:limit AS INTEGER))"
                + " AND (CASE WHEN v.in_force THEN v.live ELSE 0 END) + v.ahead < CAST(:limit AS INTEGER)),"
                + " p AS (DELETE FROM " + s + " WHERE name_key = :key AND EXISTS (SELECT 1 FROM g WHERE NOT g.no_rows)"
                + " AND (epoch < (SELECT epoch FROM g) OR expires_at <= now())),"
                + " u AS (UPDATE " + t + " x SET shared_until = CASE WHEN x.shared_until IS NOT NULL"
                + " AND x.shared_until > now() THEN GREATEST(x.shared_until, " + later + ") ELSE " + later + " END,"
                + " readers = g.readers, token = g.token, epoch = g.epoch, permits = CAST(:limit AS INTEGER),"
                + " owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                + " FROM g WHERE x.name_key = :key RETURNING x.token),"
                + " h AS (INSERT INTO " + s + " (" + String.join(", ", SHARED_COLUMNS) + ")"
                + " SELECT CAST(:key AS VARCHAR), CAST(:owner AS VARCHAR), g.epoch, g.token, " + later
                + ", now(), CAST(:lease AS BIGINT) FROM g),"
                + " l AS (DELETE FROM " + line + " WHERE name_key = :key AND EXISTS (SELECT 1 FROM g)"
                + " AND CAST(:ticket AS BIGINT) <> " + LockStore.NOT_IN_LINE
                + " AND (owner = :owner OR expires_at <= now()))"
                + " SELECT (SELECT token FROM g), (SELECT epoch FROM g), v.permits, v.ex_held, v.sh_held, v.in_force,"
                + " v.locked,"
                + " CASE WHEN EXISTS (SELECT 1 FROM g) THEN set_config('synchronous_commit', 'on', true) IS NOT NULL"
                + " ELSE FALSE END, v.ahead > 0 FROM v";
    }

    /**
     * One round trip where the standard form takes six: the row lock and the decision with every
     * write, sent as one text. pgjdbc sends both statements before one Sync, and PostgreSQL runs
     * all that comes before a Sync as one transaction in autocommit mode, each statement with a
     * snapshot of its own (READ COMMITTED): the decision starts after the row lock is held, so it
     * counts every grant committed before, and the commit at the Sync frees the row lock. A driver
     * that commits the two apart (pgjdbc's {@code preferQueryMode=simple}) is found out by the
     * decision itself, which then grants nothing: that try and every later one run in an explicit
     * transaction (three round trips). The name's first use creates its row in the first
     * statement, so no try is the one to insert it. A refusal writes nothing but the row lock's
     * no-op (and a new name's free row), committed asynchronously: nothing of it needs to survive.
     *
     * <p>A try that is not in line first asks for a permit of a name whose permits are all back
     * ({@link StandardSql#tryPermit}), the holder's row inserted by the same statement: where it
     * grants, that is the whole try, one statement as a lock's grant; else it changed nothing
     * (and wrote nothing) and the try goes on as above, one round trip more.
     */
    @Override
    Outcome tryPermit(SqlRunner r, Connection c, Args a, PermitsInUse inUse) throws SQLException {
        if (a.ticket() == LockStore.NOT_IN_LINE && !inUse.byOthers(a.key())) {
            try (PreparedStatement ps = r.prepare(c, permitAllBackWithHolder, a);
                    ResultSet rs = r.query(ps)) {
                if (rs.next()) {
                    return new Granted(rs.getLong(1), rs.getLong(2));
                }
            }
        }
        if (!committedApart) {
            Outcome o = permitOnce(r, c, a, inUse);
            if (o != null) {
                return o;
            }
            committedApart = true;
        }
        return SqlRunner.inTransaction(c, tx -> {
            Outcome o = permitOnce(r, tx, a, inUse);
            if (o == null) {
                throw new SQLException("a permit try did not hold the name's row lock in its own transaction");
            }
            return o;
        });
    }

    /** One permit try; null if its decision ran without the row lock (its statements were committed apart). */
    private Outcome permitOnce(SqlRunner r, Connection c, Args a, PermitsInUse inUse) throws SQLException {
        try (PreparedStatement ps = r.prepare(c, permitLockAndDecide, a);
                ResultSet rs = r.queryAfterCounts(ps)) {
            if (!rs.next()) {
                throw new SQLException("the permit try found no row for the name after making it");
            }
            if (!rs.getBoolean(7)) {
                return null;
            }
            long token = rs.getLong(1);
            boolean granted = !rs.wasNull();
            inUse.decided(a.key(), granted, rs.getBoolean(6), rs.getBoolean(9));
            if (granted) {
                return new Granted(token, rs.getLong(2));
            }
            return refusal(rs.getBoolean(4), rs.getBoolean(5), rs.getBoolean(6), rs.getInt(3), a.limit());
        }
    }

    @Override
    String syncCommit() {
        return " AND set_config('synchronous_commit', 'on', true) IS NOT NULL";
    }

    @Override
    List<String> lockColumns() {
        List<String> all = new ArrayList<>(super.lockColumns());
        all.add(WANTED_COLUMN);
        return all;
    }

    /**
     * {@code update} (of one lock row, by key and owner) made to notify the name's waiters, if any.
     * The notice is the last WHERE term, reached only while the row is wanted and, as PostgreSQL
     * orders a filter's terms by cost, after the owner check. Should a notice ever go out for a
     * row that the statement then does not change (a plan that checks the owner later, a re-check
     * after a concurrent change), it only wakes a waiter to try in vain. A plain UPDATE gives the
     * driver no rows to read: 3-4 us less per release than the data-modifying WITH that counted
     * them (docs/benchmarks.md), and about 15 us less for a shared holder's release.
     */
    private static String notifying(String update, String channel) {
        return notifying(update, "TRUE", channel);
    }

    /**
     * As {@link #notifying(String, String)}, where the change frees something only {@code when} (of
     * the row before it; never NULL, or the notice would go out: NOT NULL does not end the OR).
     */
    private static String notifying(String update, String when, String channel) {
        return update + " AND (wanted_until IS NULL OR wanted_until <= now() OR NOT (" + when + ") OR pg_notify("
                + channel + ", name_key) IS NOT NULL)";
    }

    /**
     * {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE <free> RETURNING token}: creates the row or
     * takes it, in one statement and one round trip. {@code set_config(..., true)} makes this
     * transaction commit synchronously whatever the session or server says, so a grant reported
     * here survives a crash of the server.
     */
    @Override
    Outcome tryExclusive(SqlRunner r, Connection c, Args a) throws SQLException {
        long token = r.queryLong(c, exclusive, a, 0);
        return token > 0 ? new Granted(token, 0) : Busy.BUSY;
    }

    /** The shared join, the holder's row and the cleanup of dead readers' rows, in one statement. */
    @Override
    Outcome tryShared(SqlRunner r, Connection c, Args a) throws SQLException {
        try (PreparedStatement ps = r.prepare(c, sharedJoin, a);
                ResultSet rs = r.query(ps)) {
            return rs.next() ? new Granted(rs.getLong(1), rs.getLong(2)) : Busy.BUSY;
        }
    }

    @Override
    Outcome tryInLine(SqlRunner r, Connection c, Args a, boolean writer) throws SQLException {
        if (writer) {
            long token = r.queryLong(c, exclusiveInLine, a, 0);
            return token > 0 ? new Granted(token, 0) : Busy.BUSY;
        }
        try (PreparedStatement ps = r.prepare(c, sharedJoinInLine, a);
                ResultSet rs = r.query(ps)) {
            return rs.next() ? new Granted(rs.getLong(1), rs.getLong(2)) : Busy.BUSY;
        }
    }

    @Override
    boolean renewShared(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.queryLong(c, renewShared, a, 0) == 1;
    }

    @Override
    boolean releaseExclusive(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, releaseExclusive, a) == 1;
    }

    @Override
    boolean releaseShared(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, releaseShared, a) == 1;
    }

    @Override
    int leaveQueue(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, unqueueNotifying, a);
    }

    @Override
    int leaveLine(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, lineLeaveNotifying, a);
    }

    /**
     * Says that the owner waits for the name for {@code :lease}, so that releases notify (they do
     * not while nobody waits: PostgreSQL serialises the commits of all notifying transactions); for
     * a writer, also takes or renews the name's writer-queue place. One statement.
     */
    @Override
    Mark markWaiting(SqlRunner r, Connection c, Args a, boolean writer) throws SQLException {
        try (PreparedStatement ps = r.prepare(c, writer ? markWriter : markReader, a);
                ResultSet rs = r.query(ps)) {
            return rs.next() ? new Mark(rs.getBoolean(1), rs.getBoolean(2)) : new Mark(false, true);
        }
    }
}
