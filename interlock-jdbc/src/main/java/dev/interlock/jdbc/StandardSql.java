package dev.interlock.jdbc;

import dev.interlock.jdbc.LockStore.Busy;
import dev.interlock.jdbc.LockStore.Granted;
import dev.interlock.jdbc.LockStore.Outcome;
import dev.interlock.jdbc.NamedSql.Args;
import dev.interlock.jdbc.SqlRunner.Rollback;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

/**
 * The lock store's statements in standard SQL, with the few variations of MySQL/MariaDB, H2 and
 * SQLite taken from their {@link Dialect} (the clock, date arithmetic, how an UPDATE returns the
 * row it changed), and how each operation runs them: where standard SQL needs two statements or
 * a transaction, the sequence is here. {@link PostgresSql} replaces those sequences with
 * PostgreSQL's single statements. Why each statement is safe: {@link LockStore}.
 */
class StandardSql {
    static final List<String> LOCK_COLUMNS = List.of(
            "name_key",
            "name",
            "token",
            "owner",
            "expires_at",
            "acquired_at",
            "lease_ms",
            "readers",
            "shared_until",
            "epoch",
            "waiter",
            "waiter_until");
    static final List<String> SHARED_COLUMNS =
            List.of("name_key", "owner", "epoch", "token", "expires_at", "acquired_at", "lease_ms");
    static final List<String> LINE_COLUMNS = List.of("name_key", "owner", "ticket", "writer", "expires_at");
    /**
     * The lock table's column for semaphores: the number of permits while permits hold the name
     * (its holders are then rows of {@code _shared}, counted in {@code readers}); NULL for a
     * plain lock. Added to tables of earlier builds by {@link LockTables}.
     */
    static final String PERMITS_COLUMN = "permits";

    static final String PERMITS_COLUMN_DDL = PERMITS_COLUMN + " INTEGER";

    final Dialect dialect;
    final String table;
    final String shared;
    final String line;
    /** The database's now, in SQL. */
    final String now;
    /** The database's now plus the {@code :lease} parameter's milliseconds. */
    final String plusLease;

    // Grants. Exclusive: free (no live holder, no live reader), no other writer queued first, nobody ahead in line.
    final NamedSql exAcquire;
    /** First use of a name, granted exclusively. */
    final NamedSql exInsert;
    /** Shared: no live exclusive holder, no live queued writer, no writer ahead in line. */
    final NamedSql shJoin;

    final NamedSql shReadBack;
    final NamedSql shInsertLock;
    final NamedSql shInsertHolder;
    /** Rows of readers whose leases all ran out before this epoch began. */
    final NamedSql shCleanup;

    final NamedSql exists;

    /**
     * A permit of a name whose permits are all back, granted as a lock is: one conditional UPDATE
     * of the name's row (see {@link #tryPermit}).
     */
    final NamedSql permitAllBack;

    // Semaphores (tryPermit): the lock row locked first, then read with the live permits and the places before ours.
    final NamedSql permitLockRow;
    final NamedSql permitRow;
    final NamedSql permitPurge;
    final NamedSql permitGrant;
    final NamedSql permitInsertLock;
    /** For a plain try found busy: the limit of the permits that hold the name, or 0. */
    final NamedSql heldByPermits;

    // Renewals: owner-checked, and only while the lease has not run out by the database's clock.
    final NamedSql exRenew;
    final NamedSql shRenewLock;
    final NamedSql shRenewHolder;

    // Releases: owner-checked; a late release never frees someone else's grant.
    final NamedSql exRelease;
    /** shared_until before readers: MySQL assigns left to right. */
    final NamedSql shReleaseLock;

    final NamedSql shReleaseHolder;
    final NamedSql holderEpoch;

    // The writer queued first: only the first in line takes the place.
    final NamedSql queue;
    final NamedSql unqueue;

    // The line.
    final NamedSql lineRenew;
    final NamedSql lineLastTicket;
    final NamedSql lineLastTicketForReader;
    final NamedSql lineInsertWriter;
    final NamedSql lineInsertReader;
    /** This waiter's own old place and the places of waiters that stopped renewing. */
    final NamedSql linePurge;

    final NamedSql lineLeave;
    final NamedSql lineAheadOfWriter;
    final NamedSql lineAheadOfReader;

    // Reading.
    final NamedSql inspectLock;
    final NamedSql inspectShared;
    final NamedSql inspectLine;
    final NamedSql listLocks;
    final NamedSql listShared;
    final NamedSql listLine;
    /** For a refused renewal: the reader's epoch now and how long ago its lease ran out. */
    final NamedSql sharedHolderNow;

    StandardSql(Dialect dialect, String table) {
        this.dialect = dialect;
        this.table = table;
        this.shared = table + "_shared";
        this.line = table + "_queue";
        String n = this.now = dialect.now();
        String plus = this.plusLease = dialect.plusMillisParam(n).replace("?", ":lease");
        String t = table;
        String s = shared;
        String sync = syncCommit();

        exAcquire = NamedSql.of("UPDATE " + t + " SET"
                + " epoch = CASE WHEN shared_until IS NOT NULL THEN epoch + 1 ELSE epoch END,"
                + " token = " + dialect.nextToken("token") + ","
                + " owner = :owner, expires_at = " + plus + ", acquired_at = " + n + ", lease_ms = :lease,"
                + " readers = 0, shared_until = NULL, waiter = NULL, waiter_until = NULL, permits = NULL"
                + " WHERE name_key = :key AND name = :name"
                + " AND (owner IS NULL OR expires_at <= " + n + ")"
                + " AND (shared_until IS NULL OR shared_until <= " + n + ")"
                + " AND (waiter IS NULL OR waiter = :owner OR waiter_until <= " + n + ")"
                + lineClear(true));
        exInsert = NamedSql.of("INSERT INTO " + t + " (" + String.join(", ", LOCK_COLUMNS)
                + ") VALUES (:key, :name, 1, :owner, " + plus + ", " + n + ", :lease, 0, NULL, 1, NULL, NULL)");
        shJoin = NamedSql.of("UPDATE " + t + " SET"
                + " epoch = CASE WHEN shared_until <= " + n + " THEN epoch + 1 ELSE epoch END,"
                + " readers = CASE WHEN shared_until IS NULL OR shared_until <= " + n + " THEN 1 ELSE readers + 1 END,"
                + " shared_until = CASE WHEN shared_until IS NULL OR shared_until <= " + n + " THEN " + plus
                + " ELSE " + dialect.greatest("shared_until", plus) + " END,"
                + " token = " + dialect.nextToken("token") + ","
                + " owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL, permits = NULL"
                + " WHERE name_key = :key AND name = :name"
                + " AND (owner IS NULL OR expires_at <= " + n + ")"
                + " AND (waiter IS NULL OR waiter_until <= " + n + ")"
                + notHeldByPermits(n)
                + lineClear(false));
        shReadBack = NamedSql.of("SELECT token, epoch, readers FROM " + t + " WHERE name_key = :key");
        shInsertLock = NamedSql.of("INSERT INTO " + t + " (" + String.join(", ", LOCK_COLUMNS)
                + ") VALUES (:key, :name, 1, NULL, NULL, NULL," + " NULL, 1, " + plus + ", 1, NULL, NULL)");
        shInsertHolder = NamedSql.of("INSERT INTO " + s + " (" + String.join(", ", SHARED_COLUMNS)
                + ") VALUES (:key, :owner, :epoch, :token, " + plus + ", " + n + ", :lease)");
        shCleanup = NamedSql.of("DELETE FROM " + s + " WHERE name_key = :key AND epoch < :epoch");
        exists = NamedSql.of("SELECT 1 FROM " + t + " WHERE name_key = :key");

        // No live holder and no live place in line. The epoch moves on, as in the full decision's grant when no
        // permit is in force, to the grant's token (never below the epoch: every epoch began with a grant), so that
        // MySQL's text has both from LAST_INSERT_ID(); epoch first, as MySQL assigns left to right.
        permitAllBack = NamedSql.of("UPDATE " + t + " SET shared_until = " + plus + ", readers = 1,"
                + " epoch = token + 1, token = " + dialect.nextToken("token") + ", permits = :limit"
                + " WHERE name_key = :key AND name = :name" + allBack("") + sync);
        permitLockRow = NamedSql.of("UPDATE " + t + " SET token = token WHERE name_key = :key" + sync);
        // MySqlSql reads these seven columns, in this order, into session variables.
        permitRow = NamedSql.of("SELECT t.token, t.epoch, COALESCE(t.permits, 0) AS permits,"
                + " CASE WHEN t.owner IS NOT NULL AND t.expires_at > " + n + " THEN 1 ELSE 0 END AS ex_held,"
                + " CASE WHEN t.shared_until IS NOT NULL AND t.shared_until > " + n + " THEN 1 ELSE 0 END AS sh_held,"
                + " (SELECT COUNT(*) FROM " + s + " h WHERE h.name_key = :key AND h.epoch = t.epoch"
                + " AND h.expires_at > " + n + ") AS live,"
                + " (SELECT COUNT(*) FROM " + line + " q WHERE q.name_key = :key AND q.expires_at > " + n
                + " AND (q.ticket < :ticket OR (q.ticket = :ticket AND q.owner < :owner))) AS ahead"
                + " FROM " + t + " t WHERE t.name_key = :key");
        permitPurge = NamedSql.of(
                "DELETE FROM " + s + " WHERE name_key = :key AND (epoch < :epoch OR expires_at <= " + n + ")");
        // shared_until first: MySQL assigns left to right, and nothing after it reads it.
        permitGrant = NamedSql.of("UPDATE " + t + " SET"
                + " shared_until = CASE WHEN shared_until IS NOT NULL AND shared_until > " + n + " THEN "
                + dialect.greatest("shared_until", plus) + " ELSE " + plus + " END,"
                + " readers = (SELECT COUNT(*) FROM " + s + " WHERE name_key = :key AND epoch = :epoch) + 1,"
                + " token = :token, epoch = :epoch, permits = :limit,"
                + " owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                + " WHERE name_key = :key");
        permitInsertLock = NamedSql.of("INSERT INTO " + t + " (" + String.join(", ", LOCK_COLUMNS) + ", "
                + PERMITS_COLUMN + ") VALUES (:key, :name, 1, NULL, NULL, NULL, NULL, 1, " + plus
                + ", 1, NULL, NULL, :limit)");
        heldByPermits = NamedSql.of("SELECT COALESCE(permits, 0) FROM " + t + " WHERE name_key = :key"
                + " AND shared_until IS NOT NULL AND shared_until > " + n);

        exRenew = NamedSql.of("UPDATE " + t + " SET expires_at = " + plus + ", lease_ms = :lease"
                + " WHERE name_key = :key AND owner = :owner AND token = :token AND expires_at > " + n + sync);
        shRenewLock = NamedSql.of("UPDATE " + t + " SET shared_until = " + dialect.greatest("shared_until", plus)
                + " WHERE name_key = :key AND epoch = :epoch AND shared_until > " + n + sync);
        shRenewHolder = NamedSql.of("UPDATE " + s + " SET expires_at = " + plus + ", lease_ms = :lease"
                + " WHERE name_key = :key AND owner = :owner AND epoch = :epoch AND expires_at > " + n);

        exRelease =
                NamedSql.of("UPDATE " + t + " SET owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                        + " WHERE name_key = :key AND owner = :owner");
        shReleaseLock =
                NamedSql.of("UPDATE " + t + " SET shared_until = CASE WHEN readers = 1 THEN NULL ELSE shared_until END,"
                        + " readers = readers - 1 WHERE name_key = :key AND epoch = :epoch AND readers > 0");
        shReleaseHolder =
                NamedSql.of("DELETE FROM " + s + " WHERE name_key = :key AND owner = :owner AND epoch = :epoch");
        holderEpoch = NamedSql.of("SELECT epoch FROM " + s + " WHERE name_key = :key AND owner = :owner");

        queue = NamedSql.of("UPDATE " + t + " SET waiter = :owner, waiter_until = " + plus
                + " WHERE name_key = :key AND (waiter IS NULL OR waiter = :owner OR waiter_until <= " + n + ")"
                + lineClear(true));
        unqueue = NamedSql.of(
                "UPDATE " + t + " SET waiter = NULL, waiter_until = NULL WHERE name_key = :key AND waiter = :owner");

        lineRenew = NamedSql.of("UPDATE " + line + " SET expires_at = " + plus
                + " WHERE name_key = :key AND owner = :owner AND expires_at > " + n);
        // The line's last ticket, and the live places that will come before a new one (for a reader: the writers').
        String last = "SELECT COALESCE(MAX(ticket), 0), COALESCE(SUM(CASE WHEN expires_at > " + n;
        lineLastTicket = NamedSql.of(last + " THEN 1 ELSE 0 END), 0) FROM " + line + " WHERE name_key = :key");
        lineLastTicketForReader =
                NamedSql.of(last + " AND writer = 1 THEN 1 ELSE 0 END), 0) FROM " + line + " WHERE name_key = :key");
        String insert =
                "INSERT INTO " + line + " (" + String.join(", ", LINE_COLUMNS) + ") VALUES (:key, :owner, :ticket, ";
        lineInsertWriter = NamedSql.of(insert + "1, " + plus + ")");
        lineInsertReader = NamedSql.of(insert + "0, " + plus + ")");
        linePurge = NamedSql.of(
                "DELETE FROM " + line + " WHERE name_key = :key AND (owner = :owner OR expires_at <= " + n + ")");
        lineLeave = NamedSql.of("DELETE FROM " + line + " WHERE name_key = :key AND owner = :owner");
        String ahead = "SELECT COUNT(*) FROM " + line + " WHERE name_key = :key AND expires_at > " + n
                + " AND (ticket < :ticket OR (ticket = :ticket AND owner < :owner))";
        lineAheadOfWriter = NamedSql.of(ahead);
        lineAheadOfReader = NamedSql.of(ahead + " AND writer = 1");

        String lockCols = "name_key, name, token, owner, epoch, readers, waiter, lease_ms,"
                + " CASE WHEN permits > 0 AND shared_until > " + n + " THEN permits ELSE 0 END AS permit_limit,"
                + " CASE WHEN owner IS NOT NULL AND expires_at > " + n + " THEN 1 ELSE 0 END AS held,"
                + " " + dialect.millisBetween(n, "expires_at") + " AS left_ms,"
                + " " + dialect.millisBetween("acquired_at", n) + " AS age_ms,"
                + " CASE WHEN waiter IS NOT NULL AND waiter_until > " + n + " THEN 1 ELSE 0 END AS queued,"
                + " " + dialect.millisBetween(n, "waiter_until") + " AS waiter_left_ms";
        String sharedCols = "name_key, owner, epoch, token, lease_ms,"
                + " " + dialect.millisBetween(n, "expires_at") + " AS left_ms,"
                + " " + dialect.millisBetween("acquired_at", n) + " AS age_ms";
        String lineCols = "name_key, owner, ticket, writer, " + dialect.millisBetween(n, "expires_at") + " AS left_ms";
        inspectLock = NamedSql.of("SELECT " + lockCols + " FROM " + t + " WHERE name_key = :key");
        inspectShared = NamedSql.of("SELECT " + sharedCols + " FROM " + s + " WHERE name_key = :key AND expires_at > "
                + n + " ORDER BY token");
        inspectLine = NamedSql.of("SELECT " + lineCols + " FROM " + line + " WHERE name_key = :key AND expires_at > "
                + n + " ORDER BY ticket, owner");
        listLocks = NamedSql.of("SELECT " + lockCols + " FROM " + t);
        listShared =
                NamedSql.of("SELECT " + sharedCols + " FROM " + s + " WHERE expires_at > " + n + " ORDER BY token");
        listLine = NamedSql.of("SELECT " + lineCols + " FROM " + line + " WHERE expires_at > " + n
                + " ORDER BY name_key, ticket, owner");
        sharedHolderNow = NamedSql.of("SELECT t.epoch, " + dialect.millisBetween(n, "s.expires_at") + " FROM " + s
                + " s JOIN " + t + " t ON t.name_key = s.name_key WHERE s.name_key = :key AND s.owner = :owner");
    }

    /** A WHERE term that makes a grant or renewal commit synchronously, where the database lets a statement say so; else empty. */
    String syncCommit() {
        return "";
    }

    /**
     * The line's rule, as the last term of a WHERE clause: no live place in the name's line comes
     * before this waiter's {@code :ticket} ({@link LockStore#NOT_IN_LINE} for a try that is not in
     * line: after everyone), ties going by owner id; for a reader, no such writer's place.
     *
     * <p>This reads rows other than the one the statement changes, so under READ COMMITTED it may
     * decide on a line a moment old: a place that was just taken may not count yet. That costs
     * order at most, never exclusion, which the lock row's own terms decide.
     */
    final String lineClear(boolean writer) {
        return " AND NOT EXISTS (SELECT 1 FROM " + line + " q WHERE q.name_key = :key AND q.expires_at > " + now
                + " AND (q.ticket < :ticket OR (q.ticket = :ticket AND q.owner < :owner))"
                + (writer ? "" : " AND q.writer = 1") + ")";
    }

    /**
     * WHERE terms of a permit's grant as a lock's, for the name's row ({@code row}: its alias and
     * a dot, or empty): every permit came back ({@code permits} set, {@code readers} 0: no holder
     * row at all, by {@link LockStore}'s invariants), no live exclusive holder, and no live place
     * in the name's line.
     */
    final String allBack(String row) {
        return " AND " + row + "permits > 0 AND " + row + "readers = 0"
                + " AND (" + row + "owner IS NULL OR " + row + "expires_at <= " + now + ")"
                + lineClear(true);
    }

    /** The columns the lock table must have. */
    List<String> lockColumns() {
        List<String> all = new java.util.ArrayList<>(LOCK_COLUMNS);
        all.add(PERMITS_COLUMN);
        return all;
    }

    /** A WHERE term: no permit holds the name (plain readers may not join permit holders). */
    static String notHeldByPermits(String now) {
        return " AND (permits IS NULL OR permits = 0 OR shared_until IS NULL OR shared_until <= " + now + ")";
    }

    /** The LISTEN channel of the table's releases ({@link PostgresSql}); the table name is a plain identifier. */
    String channel() {
        return ("interlock_" + table).toLowerCase(Locale.ROOT);
    }

    // ================================================================ operations

    /** One exclusive try: the conditional UPDATE, or the INSERT of a name's first row. */
    Outcome tryExclusive(SqlRunner r, Connection c, Args a) throws SQLException {
        for (int round = 0; round < 2; round++) {
            long token = updateReturningToken(r, c, exAcquire, a);
            if (token > 0) {
                return new Granted(token, 0);
            }
            try {
                r.update(c, exInsert, a);
                return new Granted(1, 0);
            } catch (SQLException e) {
                if (!dialect.isDuplicateKey(e)) {
                    throw e;
                }
                // Created by someone else since our update: look again.
            }
        }
        return Busy.BUSY;
    }

    /**
     * One try of a waiter in line ({@code :ticket}): as {@link #tryExclusive} or {@link #tryShared},
     * and a grant also removes its place (else it would run out by itself), with the places that ran out.
     */
    Outcome tryInLine(SqlRunner r, Connection c, Args a, boolean writer) throws SQLException {
        Outcome o = writer ? tryExclusive(r, c, a) : tryShared(r, c, a);
        if (o instanceof Granted) {
            r.update(c, linePurge, a);
        }
        return o;
    }

    /** Runs a grant UPDATE and returns the new token, or 0 if the row did not match. */
    private long updateReturningToken(SqlRunner r, Connection c, NamedSql update, Args a) throws SQLException {
        String q = dialect.updateReturning(update.text, "token");
        if (q != null) {
            return r.queryLong(c, update.wrapped(q), a, 0);
        }
        // MySQL/MariaDB: token = LAST_INSERT_ID(token + 1) reports the new token with the update's result.
        try (PreparedStatement ps = r.prepare(c, update, a, true)) {
            if (r.exec(ps) == 0) {
                return 0;
            }
            try (ResultSet rs = ps.getGeneratedKeys()) {
                if (rs.next() && rs.getLong(1) > 0) {
                    return rs.getLong(1);
                }
            }
        }
        // A read-back here could see a later holder's token: refuse rather than guess.
        throw new SQLException(
                "the driver did not report LAST_INSERT_ID() with the update's result; use MariaDB Connector/J or MySQL Connector/J");
    }

    /**
     * One try for a permit of a semaphore of {@code :limit}, in a transaction that locks the name's
     * row first. Every permit grant of the name waits for that lock, so the count of live permit
     * holders read by the next statement (a fresh statement at READ COMMITTED; the first
     * consistent read of MySQL's transaction) includes every grant committed before: exclusion
     * rests on the row lock, not on a statement's view of other rows. Refused with
     * {@link LockStore.Mismatch} if a plain lock, plain readers or permits of another limit hold
     * the name; busy if the live holders plus the live places before ours in line fill the limit.
     * A grant removes the holders whose leases ran out (so that {@code readers} counts the live
     * ones, as releases expect) and, for a waiter, its place in line. {@link PostgresSql} sends
     * its two statements in one round trip instead.
     *
     * <p>A try that is not in line first asks {@link #permitAllBack}: where every permit of the
     * name came back ({@code permits} set, {@code readers} 0: the name has no holder row at all,
     * {@link LockStore}'s invariants), nobody holds it and nobody waits, a permit is granted as a
     * lock is, by one conditional UPDATE of the row, which the database decides on the row's latest
     * version under its lock; the holder's row goes in the same transaction. The full decision
     * would grant the same. Any other state (a holder, a place in line, a new name, another kind of
     * lock last) leaves the row as it was and the try goes on with the full decision. Where the
     * last full decision of this space found the name held by other permits or waited for, the
     * all-back statement is not sent ({@link PermitsInUse}).
     */
    Outcome tryPermit(SqlRunner r, Connection c, Args a, PermitsInUse inUse) throws SQLException {
        for (int round = 0; round < 2; round++) {
            try {
                Outcome o = SqlRunner.rolledBack(c, tx -> permitInTransaction(r, tx, a, inUse));
                if (o != null) {
                    return o;
                }
            } catch (SQLException e) {
                if (!dialect.isDuplicateKey(e)) {
                    throw e;
                }
                // The name's row was created by someone else since we looked: look again.
            }
        }
        return Busy.BUSY;
    }

    /**
     * What a permit try that did not grant answers, from what its decision read: refused with
     * {@link LockStore.Mismatch} if a plain lock or plain readers hold the name (limit 0) or
     * permits of another limit are in force; otherwise busy. Every dialect's permit try asks this.
     */
    static Outcome refusal(boolean exclusiveHeld, boolean sharedHeld, boolean inForce, int permits, int limit) {
        if (exclusiveHeld || (sharedHeld && permits == 0)) {
            return new LockStore.Mismatch(0);
        }
        if (inForce && permits != limit) {
            return new LockStore.Mismatch(permits);
        }
        return Busy.BUSY;
    }

    /** The permit try's statements after the transaction began. */
    private Outcome permitInTransaction(SqlRunner r, Connection tx, Args a, PermitsInUse inUse) throws SQLException {
        if (a.ticket() == LockStore.NOT_IN_LINE && !inUse.byOthers(a.key())) {
            long[] got = grantRow(r, tx, permitAllBack, a);
            if (got != null) {
                r.update(tx, shInsertHolder, a.token(got[0]).epoch(got[1]));
                return new Granted(got[0], got[1]);
            }
        }
        r.update(tx, permitLockRow, a);
        long token;
        long epoch;
        int permits;
        boolean exclusiveHeld;
        boolean sharedHeld;
        long live;
        long ahead;
        try (PreparedStatement ps = r.prepare(tx, permitRow, a);
                ResultSet rs = r.query(ps)) {
            if (!rs.next()) {
                r.update(tx, permitInsertLock, a);
                r.update(tx, shInsertHolder, a.epoch(1).token(1));
                inUse.decided(a.key(), true, false, false);
                return new Granted(1, 1);
            }
            token = rs.getLong("token");
            epoch = rs.getLong("epoch");
            permits = rs.getInt("permits");
            exclusiveHeld = rs.getInt("ex_held") == 1;
            sharedHeld = rs.getInt("sh_held") == 1;
            live = rs.getLong("live");
            ahead = rs.getLong("ahead");
        }
        boolean inForce = sharedHeld && live > 0;
        Outcome refused = refusal(exclusiveHeld, sharedHeld, inForce, permits, a.limit());
        boolean full = (inForce ? live : 0) + ahead >= a.limit();
        inUse.decided(a.key(), refused == Busy.BUSY && !full, inForce, ahead > 0);
        if (refused != Busy.BUSY) {
            throw new Rollback(refused);
        }
        if (full) {
            throw new Rollback(Busy.BUSY);
        }
        long grantEpoch = inForce ? epoch : epoch + 1;
        Args g = a.epoch(grantEpoch).token(token + 1);
        r.update(tx, permitPurge, g);
        r.update(tx, permitGrant, g);
        r.update(tx, shInsertHolder, g);
        if (a.ticket() != LockStore.NOT_IN_LINE) {
            r.update(tx, linePurge, a);
        }
        return new Granted(token + 1, grantEpoch);
    }

    /**
     * In a transaction: runs a grant UPDATE of the name's row and returns {token, epoch, readers}
     * after it, or null if the row did not match. Without UPDATE ... RETURNING the row is read
     * back: this transaction holds its lock, so nobody changed it since.
     */
    private long[] grantRow(SqlRunner r, Connection tx, NamedSql update, Args a) throws SQLException {
        String q = dialect.updateReturning(update.text, "token, epoch, readers");
        if (q == null && r.update(tx, update, a) != 1) {
            return null;
        }
        try (PreparedStatement ps = r.prepare(tx, q != null ? update.wrapped(q) : shReadBack, a);
                ResultSet rs = r.query(ps)) {
            return rs.next() ? new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)} : null;
        }
    }

    /** After a plain try found the name busy: the limit of the permits that hold it, or 0 (held as a plain lock, or free now). */
    int heldByPermits(SqlRunner r, Connection c, Args a) throws SQLException {
        return (int) r.queryLong(c, heldByPermits, a, 0);
    }

    /** One shared try: in a transaction, join the row's readers (or create the row) and add the holder's row. */
    Outcome tryShared(SqlRunner r, Connection c, Args a) throws SQLException {
        for (int round = 0; round < 2; round++) {
            try {
                Outcome o = SqlRunner.rolledBack(c, tx -> {
                    long[] got = joinShared(r, tx, a);
                    if (got == null) {
                        throw new Rollback(Busy.BUSY);
                    }
                    r.update(tx, shInsertHolder, a.epoch(got[1]).token(got[0]));
                    if (got[2] == 1 && got[1] > 1) {
                        r.update(tx, shCleanup, a.epoch(got[1]));
                    }
                    return new Granted(got[0], got[1]);
                });
                if (o != null) {
                    return o;
                }
            } catch (SQLException e) {
                if (!dialect.isDuplicateKey(e)) {
                    throw e;
                }
            }
        }
        return Busy.BUSY;
    }

    /**
     * In a transaction: joins the readers of the name's row, creating the row if it is new.
     * Returns {token, epoch, readers} or null if busy. A duplicate key (another process created
     * the row first) is retried by {@link #tryShared}.
     */
    private long[] joinShared(SqlRunner r, Connection c, Args a) throws SQLException {
        long[] joined = grantRow(r, c, shJoin, a);
        if (joined != null) {
            return joined;
        }
        if (r.queryLong(c, exists, a, 0) == 1) {
            return null;
        }
        r.update(c, shInsertLock, a);
        return new long[] {1, 1, 1};
    }

    /** Renews a shared hold: the row's summary and the holder's own row, both or neither. */
    boolean renewShared(SqlRunner r, Connection c, Args a) throws SQLException {
        return SqlRunner.rolledBack(c, tx -> {
            if (r.update(tx, shRenewLock, a) != 1 || r.update(tx, shRenewHolder, a) != 1) {
                throw new Rollback(false);
            }
            return true;
        });
    }

    boolean releaseExclusive(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, exRelease, a) == 1;
    }

    /**
     * The lock row first (as every other transaction here), then the holder's row; if that row was
     * already gone (broken), the count is put back by the rollback. True only if the holder was
     * counted out: one whose epoch moved on (its lease ran out and the name was granted since) was
     * no longer held, and its release only removes its row.
     */
    boolean releaseShared(SqlRunner r, Connection c, Args a) throws SQLException {
        return SqlRunner.rolledBack(c, tx -> {
            int countedOut = r.update(tx, shReleaseLock, a);
            if (r.update(tx, shReleaseHolder, a) != 1) {
                throw new Rollback(false);
            }
            return countedOut == 1;
        });
    }

    int leaveQueue(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, unqueue, a);
    }

    int leaveLine(SqlRunner r, Connection c, Args a) throws SQLException {
        return r.update(c, lineLeave, a);
    }

    /** Only PostgreSQL marks a name as wanted, so that its releases notify. */
    LockStore.Mark markWaiting(SqlRunner r, Connection c, Args a, boolean writer) throws SQLException {
        throw new UnsupportedOperationException(dialect.product() + " sends no notifications");
    }
}
