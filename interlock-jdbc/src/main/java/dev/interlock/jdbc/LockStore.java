package dev.interlock.jdbc;

import dev.interlock.LockBackendException;
import dev.interlock.Mode;
import dev.interlock.jdbc.NamedSql.Args;
import dev.interlock.jdbc.SqlRunner.Work;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Secrets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The lock table and what is done on it, with no knowledge of the lock SPI: plain methods that
 * take a name, a mode and an owner id, and return a token or say "busy". The statements are the
 * dialect's ({@link StandardSql}, {@link PostgresSql}), run by a {@link SqlRunner}; the tables
 * are checked by {@link LockTables} and read into states by {@link LockRows}. What is here is the
 * algorithm: which statements an operation runs, and what a failure means.
 *
 * <h2>Data</h2>
 * One row per name in the lock table (never deleted, so its {@code token} counter only grows):
 * the exclusive holder ({@code owner}, {@code expires_at}, {@code acquired_at}: the classic lock table's shape),
 * a summary of the shared holders ({@code readers}: how many are registered in the current
 * {@code epoch}; {@code shared_until}: no shared holder's lease ends later), and the writer queued
 * first ({@code waiter} until {@code waiter_until}). Each shared holder also has its own row in
 * {@code <table>_shared}, for owner-checked renewal and release and for {@code status}; each
 * waiter a place in {@code <table>_queue}, the line (see {@link #keepInLine}).
 *
 * <h2>Why it is safe at READ COMMITTED</h2>
 * Every acquisition is one conditional change of the name's row whose WHERE clause holds the
 * whole decision about exclusion and reads only that row: an UPDATE (PostgreSQL: {@code INSERT
 * ... ON CONFLICT DO UPDATE ... WHERE}). The database evaluates it on the latest committed version
 * of the row, under the row's lock; a writer and a reader arriving together both change that
 * row, so the second waits for the first to commit and then decides on what the first wrote.
 * Exclusion never depends on another row, because a statement's view of other rows can be older
 * than the row it locked: "check, then insert" is exactly the bug this avoids. The line's term
 * does read other rows, and decides order only. Time is the database's ({@link Dialect#now()}).
 *
 * <h2>Invariants</h2>
 * <ul>
 *   <li>{@code readers} equals the number of {@code _shared} rows of the current epoch, and is 0
 *       exactly when {@code shared_until} is null;</li>
 *   <li>{@code epoch} moves on whenever the shared holders are replaced without releasing (their
 *       leases all ran out): rows of an earlier epoch are dead, and neither renew nor count;</li>
 *   <li>while {@code permits} is set, {@code readers} 0 means the name has no row in
 *       {@code _shared} at all: the last grant was a permit's, whose clean-up (or the
 *       all-back grant, which needs {@code readers} 0) left rows of its epoch only, and every
 *       grant, release and break of a permit changes a holder's row and {@code readers} together
 *       since. Every other grant sets {@code permits} to NULL;</li>
 *   <li>{@code token} grows by one with every grant, shared or exclusive, and {@code epoch} never
 *       passes it: an epoch moves on only with a grant, by one or to the grant's token.</li>
 * </ul>
 */
final class LockStore {
    /** The ticket of a try that is not in the name's line: it comes after everyone who is. */
    static final long NOT_IN_LINE = Long.MAX_VALUE;

    /** What one try got. */
    sealed interface Outcome permits Granted, Busy, Mismatch {}

    /** A grant: its fencing token, and for shared holders the epoch they joined. */
    record Granted(long token, long epoch) implements Outcome {}

    /** The name is held with another limit ({@code limitInForce}; 0: as a plain lock) than the one asked. */
    record Mismatch(int limitInForce) implements Outcome {}

    /** Held by someone else, or a queued writer goes first. */
    enum Busy implements Outcome {
        BUSY
    }

    /** One holder or the queued writer, with times measured by the database relative to its now. */
    record Holder(Mode mode, String owner, long token, long leftMs, long ageMs, long leaseMs, boolean waiting) {}

    /** What the table says about one name: its holders, the writer queued first, and the waiting line in order. */
    record State(
            String name, long lastToken, List<Holder> holders, Optional<Holder> waiter, List<Holder> line, int limit) {}

    /** Why a renewal failed (wrong owner, expired, not found: docs/jdbc.md, the renewal table). */
    record Lost(String why) {}

    /** What {@link #markWaiting} found: whether the writer-queue place is ours, whether the lock looked free. */
    record Mark(boolean queued, boolean free) {}

    /** Where a waiter stands in the name's line: its ticket, and how many live places before it can hold it up. */
    record Place(long ticket, int ahead) {}

    final String description;
    final Dialect dialect;
    final String table;
    final String channel;
    private final StandardSql sql;
    private final SqlRunner runner;
    private final SqlFailures failures;
    private final BackendFailures refusals;
    /** Names this space last saw held by other permits or waited for (StandardSql#tryPermit). */
    private final PermitsInUse permitsInUse = new PermitsInUse();

    LockStore(
            String description,
            Dialect dialect,
            String table,
            Connections connections,
            Duration statementTimeout,
            Secrets secrets) {
        this.description = description;
        this.dialect = dialect;
        this.table = TableName.validate(table);
        this.sql = dialect.statements(this.table);
        this.channel = sql.channel();
        this.failures = new SqlFailures(description, dialect, table, statementTimeout.toMillis(), secrets);
        this.refusals = new BackendFailures(description);
        this.runner = new SqlRunner(description, dialect, connections, failures, statementTimeout);
    }

    /** Stops the statement timer, if it was started. */
    void close() {
        runner.close();
    }

    private <T> T call(String what, String name, boolean idempotent, Work<T> work) {
        return runner.call(what, name, idempotent, work);
    }

    /**
     * Checks that the tables exist with the expected columns, creating them first if
     * {@code create}.
     *
     * @param deferred the URL asks for creation, but the space was opened only to read: a missing table is named as not created yet
     */
    void checkTables(boolean create, boolean deferred) {
        new LockTables(sql, runner, failures, refusals).check(create, deferred);
    }

    void checkTables(boolean create) {
        checkTables(create, false);
    }

    // ================================================================================ acquire

    /**
     * One try, never waiting for a conflicting holder. A grant is committed (synchronously, on
     * PostgreSQL) before it is returned; a waiter's place in line goes with it.
     *
     * @param ticket the waiter's place in line, or {@link #NOT_IN_LINE}
     */
    Outcome tryAcquire(String name, Mode mode, String owner, Duration lease, long ticket) {
        return tryAcquire(name, mode, 0, owner, lease, ticket, true);
    }

    /**
     * As {@link #tryAcquire(String, Mode, String, Duration, long)}; with a {@code limit} above 0,
     * for one permit of a semaphore of that many. Refused with {@code LimitMismatchException} if
     * the name is held with another limit (a plain lock asked of permits, or the reverse).
     *
     * @param askPermits for a plain lock found busy: ask whether permits hold the name (one more
     *     statement); a waiter asks at its first try and after each renewal of its place, not at
     *     every try, so that a line of waiters polling a database without notifications does not
     *     double its statements
     */
    Outcome tryAcquire(
            String name, Mode mode, int limit, String owner, Duration lease, long ticket, boolean askPermits) {
        Args a = Args.of(NameKey.of(name))
                .name(name)
                .owner(owner)
                .lease(lease.toMillis())
                .ticket(ticket)
                .limit(limit);
        boolean writer = mode == Mode.EXCLUSIVE;
        Work<Outcome> lock = ticket != NOT_IN_LINE
                ? c -> sql.tryInLine(runner, c, a, writer)
                : writer ? c -> sql.tryExclusive(runner, c, a) : c -> sql.tryShared(runner, c, a);
        Work<Outcome> work = limit > 0
                ? c -> sql.tryPermit(runner, c, a, permitsInUse)
                : c -> {
                    Outcome busyOrNot = lock.run(c);
                    // Busy because permits hold it? A mistake to report, not a wait (docs/semaphores.md). Asked
                    // only of a busy try, on the same connection.
                    int inForce = busyOrNot == Busy.BUSY && askPermits ? sql.heldByPermits(runner, c, a) : 0;
                    return inForce > 0 ? new Mismatch(inForce) : busyOrNot;
                };
        Outcome o = tryOnce(name, owner, work);
        if (o instanceof Mismatch m) {
            throw refusals.limitMismatch(name, m.limitInForce(), limit);
        }
        return o;
    }

    private Outcome tryOnce(String name, String owner, Work<Outcome> work) {
        try {
            return call("acquiring", name, false, work);
        } catch (LockBackendException e) {
            if (!e.isTransient()) {
                throw e;
            }
            // The reply may have been lost after the grant committed: undo whatever this owner (unique to
            // this acquisition) may hold, so that a failure reported here never leaves the lock taken.
            try {
                abandon(name, owner);
            } catch (LockBackendException again) {
                e.addSuppressed(again);
                throw e;
            }
            // The state is now as if the failed try never happened: try once more on a fresh connection.
            return call("acquiring", name, false, work);
        }
    }

    // ================================================================================ the writer's queue

    /**
     * Puts {@code owner} first in the name's writer queue (one place) for {@code lease}, or renews
     * its place. While the place is live, no reader joins and no other writer is granted.
     *
     * @return true if the place is ours
     */
    boolean queueWriter(String name, String owner, Duration lease) {
        return queueWriter(name, owner, lease, NOT_IN_LINE);
    }

    /** As {@link #queueWriter(String, String, Duration)}, for the holder of {@code ticket} in the name's line: only the first in line gets the place. */
    boolean queueWriter(String name, String owner, Duration lease, long ticket) {
        Args a = Args.of(NameKey.of(name)).owner(owner).lease(lease.toMillis()).ticket(ticket);
        return call("queueing for", name, true, c -> runner.update(c, sql.queue, a) == 1);
    }

    /**
     * PostgreSQL: says that {@code owner} waits for {@code name} until {@code lease} from now, so
     * that releases notify; for a writer, also takes or renews the name's writer-queue place. If
     * the lock looked free when the mark was written, the caller tries again at once: a release
     * that committed before the mark did not notify, and one after it will.
     */
    Mark markWaiting(String name, Mode mode, String owner, Duration lease, long ticket) {
        Args a = Args.of(NameKey.of(name)).owner(owner).lease(lease.toMillis()).ticket(ticket);
        return call("queueing for", name, true, c -> sql.markWaiting(runner, c, a, mode == Mode.EXCLUSIVE));
    }

    /** Gives up {@code owner}'s place in the writer queue, if it has it (on PostgreSQL, notifying the name's waiters). */
    void leaveQueue(String name, String owner) {
        Args a = Args.of(NameKey.of(name)).owner(owner);
        call("leaving the queue of", name, true, c -> sql.leaveQueue(runner, c, a));
    }

    // ================================================================================ the line

    /**
     * Keeps {@code owner}'s place in the name's line for {@code lease} from the database's now:
     * renews it while it is live, else (the first wait, or a place that ran out while the waiter
     * was stopped) takes a new one at the end, after clearing the places that ran out. Also counts
     * the live places before it (for a reader, the writers' places), so that a waiter further
     * back need not try at every release. Two waiters that read the last ticket at the same moment
     * get the same ticket and are ordered by owner id: they arrived together.
     *
     * @param ticket the place this waiter had, or {@link #NOT_IN_LINE}
     */
    Place keepInLine(String name, Mode mode, String owner, long ticket, Duration lease) {
        Args given = Args.of(NameKey.of(name)).owner(owner).lease(lease.toMillis());
        boolean writer = mode == Mode.EXCLUSIVE;
        return call("waiting in line for", name, true, c -> {
            Args a = given.ticket(ticket);
            if (ticket != NOT_IN_LINE) {
                if (runner.update(c, sql.lineRenew, a) == 1) {
                    return new Place(ticket, (int)
                            runner.queryLong(c, writer ? sql.lineAheadOfWriter : sql.lineAheadOfReader, a, 0));
                }
                // Our place ran out (the waiter was stopped past its lease): to the end of the line.
                runner.update(c, sql.linePurge, a);
            }
            try {
                return join(c, a, writer);
            } catch (SQLException e) {
                if (!dialect.isDuplicateKey(e)) {
                    throw e;
                }
                // A place of ours already: the answer to an earlier join was lost. A new one at the end.
                runner.update(c, sql.linePurge, a);
                return join(c, a, writer);
            }
        });
    }

    /** Takes a place at the end of the line: two statements (read the last ticket and the places before, insert). */
    private Place join(Connection c, Args a, boolean writer) throws SQLException {
        long last;
        long ahead;
        try (PreparedStatement ps = runner.prepare(c, writer ? sql.lineLastTicket : sql.lineLastTicketForReader, a);
                ResultSet rs = runner.query(ps)) {
            rs.next();
            last = rs.getLong(1);
            ahead = rs.getLong(2);
        }
        Args mine = a.ticket(last + 1);
        runner.update(c, writer ? sql.lineInsertWriter : sql.lineInsertReader, mine);
        return new Place(mine.ticket(), (int) ahead);
    }

    /** Gives up {@code owner}'s place in the name's line; on PostgreSQL the waiters behind it are notified, as by a release. */
    void leaveLine(String name, String owner) {
        Args a = Args.of(NameKey.of(name)).owner(owner);
        call("leaving the line of", name, true, c -> sql.leaveLine(runner, c, a));
    }

    // ================================================================================ renew, release, break

    /**
     * Extends a grant to {@code lease} from the database's now, if it is still this owner's and its
     * lease has not run out.
     *
     * @return empty if renewed, else why not
     */
    Optional<Lost> renew(String name, Mode mode, String owner, long token, long epoch, Duration lease) {
        Args a = Args.of(NameKey.of(name))
                .owner(owner)
                .lease(lease.toMillis())
                .token(token)
                .epoch(epoch);
        boolean ok = call(
                "renewing",
                name,
                true,
                c -> mode == Mode.EXCLUSIVE ? runner.update(c, sql.exRenew, a) == 1 : sql.renewShared(runner, c, a));
        return ok ? Optional.empty() : Optional.of(new Lost(whyLost(name, mode, a)));
    }

    /** Why a renewal failed, from a fresh look at the row: wrong owner, expired, or not found. */
    private String whyLost(String name, Mode mode, Args a) {
        try {
            return call("inspecting", name, true, c -> {
                if (mode == Mode.EXCLUSIVE) {
                    try (PreparedStatement ps = runner.prepare(c, sql.inspectLock, a);
                            ResultSet rs = runner.query(ps)) {
                        if (!rs.next()) {
                            return "its row is gone from " + table + " (deleted by hand?)";
                        }
                        if (a.owner().equals(rs.getString("owner"))) {
                            return "its lease ran out " + -rs.getLong("left_ms")
                                    + "ms ago by the database's clock before it was renewed";
                        }
                        long now = rs.getLong("token");
                        return now > a.token()
                                ? "it was taken over after its lease ran out (token " + now + " is newer)"
                                : "it was broken or released (the row no longer names this owner)";
                    }
                }
                try (PreparedStatement ps = runner.prepare(c, sql.sharedHolderNow, a);
                        ResultSet rs = runner.query(ps)) {
                    if (!rs.next()) {
                        return "its shared hold was broken or released (no row for this owner in " + sql.shared + ")";
                    }
                    if (rs.getLong(1) != a.epoch()) {
                        return "the leases of all its readers ran out and the lock was taken over";
                    }
                    return "its lease ran out " + -rs.getLong(2)
                            + "ms ago by the database's clock before it was renewed";
                }
            });
        } catch (LockBackendException e) {
            return "the database no longer has it for this owner";
        }
    }

    /**
     * Releases the grant if it is still this owner's; does nothing otherwise (a late release never
     * frees someone else's lock).
     *
     * @return true if something was released
     */
    boolean release(String name, Mode mode, String owner, long epoch) {
        Args a = Args.of(NameKey.of(name)).owner(owner).epoch(epoch);
        return call(
                "releasing",
                name,
                true,
                c -> mode == Mode.EXCLUSIVE ? sql.releaseExclusive(runner, c, a) : sql.releaseShared(runner, c, a));
    }

    /** Best effort after an acquire whose outcome is unknown: releases whatever {@code owner} holds on the name. */
    void abandon(String name, String owner) {
        Args a = Args.of(NameKey.of(name)).owner(owner);
        call("cleaning up after a failed acquire of", name, true, c -> {
            sql.releaseExclusive(runner, c, a);
            long epoch = runner.queryLong(c, sql.holderEpoch, a, -1);
            if (epoch >= 0) {
                sql.releaseShared(runner, c, a.epoch(epoch));
            }
            return null;
        });
    }

    /**
     * Removes {@code owner}'s hold on {@code name}, exclusive or shared, whether or not its lease
     * ran out; nobody else's.
     *
     * @return true if that owner held it
     */
    boolean breakLock(String name, String owner) {
        Args a = Args.of(NameKey.of(name)).owner(owner);
        return call("breaking", name, true, c -> {
            if (sql.releaseExclusive(runner, c, a)) {
                return true;
            }
            long epoch = runner.queryLong(c, sql.holderEpoch, a, -1);
            return epoch >= 0 && sql.releaseShared(runner, c, a.epoch(epoch));
        });
    }

    // ================================================================================ inspect

    /** The name's holders, queued writer and line; empty if the name was never used. Changes nothing. */
    Optional<State> inspect(String name) {
        String key = NameKey.of(name);
        Args a = Args.of(key);
        return call("inspecting", name, true, c -> {
            Map<String, List<Holder>> readers = new HashMap<>();
            Map<String, Long> epochs = new HashMap<>();
            State s;
            try (PreparedStatement ps = runner.prepare(c, sql.inspectLock, a);
                    ResultSet rs = runner.query(ps)) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                s = LockRows.state(rs, epochs);
            }
            if (!s.name().equals(name)) {
                throw refusals.refused(
                        name,
                        "the row with key " + key + " in " + table + " names " + s.name()
                                + ", not the name it was asked for: the table was changed by hand",
                        null);
            }
            try (PreparedStatement ps = runner.prepare(c, sql.inspectShared, a);
                    ResultSet rs = runner.query(ps)) {
                LockRows.readHolders(rs, readers, epochs);
            }
            Map<String, List<Holder>> line = new HashMap<>();
            try (PreparedStatement ps = runner.prepare(c, sql.inspectLine, a);
                    ResultSet rs = runner.query(ps)) {
                LockRows.readLine(rs, line);
            }
            return Optional.of(
                    LockRows.withReaders(s, readers.getOrDefault(key, List.of()), line.getOrDefault(key, List.of())));
        });
    }

    /** Every name with a row, sorted by name. */
    List<State> list() {
        Args none = Args.of(null);
        return call("listing", null, true, c -> {
            Map<String, List<Holder>> readers = new HashMap<>();
            Map<String, Long> epochs = new HashMap<>();
            Map<String, State> states = new HashMap<>();
            try (PreparedStatement ps = runner.prepare(c, sql.listLocks, none);
                    ResultSet rs = runner.query(ps)) {
                while (rs.next()) {
                    states.put(rs.getString("name_key"), LockRows.state(rs, epochs));
                }
            }
            try (PreparedStatement ps = runner.prepare(c, sql.listShared, none);
                    ResultSet rs = runner.query(ps)) {
                LockRows.readHolders(rs, readers, epochs);
            }
            Map<String, List<Holder>> line = new HashMap<>();
            try (PreparedStatement ps = runner.prepare(c, sql.listLine, none);
                    ResultSet rs = runner.query(ps)) {
                LockRows.readLine(rs, line);
            }
            List<State> out = new ArrayList<>();
            states.forEach((k, s) -> out.add(
                    LockRows.withReaders(s, readers.getOrDefault(k, List.of()), line.getOrDefault(k, List.of()))));
            out.sort((x, y) -> x.name().compareTo(y.name()));
            return out;
        });
    }
}
