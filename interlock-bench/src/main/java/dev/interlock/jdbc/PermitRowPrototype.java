package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.jdbc.NamedSql.Args;
import dev.interlock.testservers.PostgresServer;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a PostgreSQL permit's cycle goes, and what a permit whose holders live in the name's own
 * row would cost (issue 29: a permit within 1.2× of the lock). A measurement, not a backend: it
 * runs the store's own statements (read from {@link PostgresSql}, hence this package) by hand
 * through JDBC, next to a prototype of the row layout on a scratch table, alternated round by
 * round in one JVM against one PostgreSQL, and prints each statement's server time and buffers
 * ({@code pg_stat_statements}). Cycles, each on its own name:
 *
 * <ul>
 *   <li>{@code lib lock} / {@code lib permit}: {@code tryAcquire} + close through the library, as
 *       {@code SemaphoreAB} does;
 *   <li>{@code sql lock}: the store's exclusive grant and release statements;
 *   <li>{@code sql permit}: the store's permit try (row lock and decision, one round trip) and
 *       release;
 *   <li>{@code sql row permit} and {@code sql json permit}: the prototypes: the name's row carries
 *       its holders (in arrays of owner, token, expiry, since and lease; or in one JSONB object
 *       keyed by owner) and the earliest expiry among them ({@code h_min}); one {@code INSERT ...
 *       ON CONFLICT DO UPDATE ... WHERE} of that row decides and grants (live holders counted from
 *       the row while {@code h_min} has not passed, the places ahead in line counted as the lock's
 *       grant checks its line) and one {@code UPDATE} of the row releases. Holders that ran out
 *       would need a cleanup statement first (not measured: the uncontended cycle never has one).
 * </ul>
 *
 * {@snippet lang="shell" :
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.jdbc.PermitRowPrototype 40 300
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.jdbc.PermitRowPrototype 40 300 autovacuum_naptime=1
 * }
 * (rounds, cycles per block, then any PostgreSQL settings)
 */
public final class PermitRowPrototype {
    private PermitRowPrototype() {}

    private static final String TABLE = "probe";
    private static final String ROW_TABLE = "probe_rows";

    @FunctionalInterface
    private interface Cycle {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int ops = Integer.parseInt(args[1]);
        Map<String, String> config = new HashMap<>(Map.of(
                "synchronous_commit", "on",
                "shared_preload_libraries", "pg_stat_statements",
                "pg_stat_statements.track_planning", "on"));
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            config.put(kv[0], kv[1]);
        }
        try (PostgresServer pg = PostgresServer.start(config)) {
            String url = "jdbc:postgresql://127.0.0.1:" + pg.port() + "/postgres?user=postgres";
            try (LockSpace space = Interlock.open(url + "&table=" + TABLE + "&create=true");
                    Connection c = DriverManager.getConnection(url);
                    Statement st = c.createStatement()) {
                st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
                st.execute("CREATE TABLE " + ROW_TABLE + " (LIKE " + TABLE + " INCLUDING ALL)");
                st.execute(
                        "ALTER TABLE " + ROW_TABLE + " ADD COLUMN h_owner VARCHAR(512)[], ADD COLUMN h_token BIGINT[],"
                                + " ADD COLUMN h_exp TIMESTAMPTZ[], ADD COLUMN h_since TIMESTAMPTZ[], ADD COLUMN h_lease BIGINT[],"
                                + " ADD COLUMN h_min TIMESTAMPTZ, ADD COLUMN holders JSONB");
                Map<String, Cycle> cycles = cycles(space, c, new PostgresSql(Dialect.forProduct("PostgreSQL"), TABLE));
                for (Cycle cycle : cycles.values()) { // warm-up
                    for (int i = 0; i < ops * 5; i++) {
                        cycle.run();
                    }
                }
                st.execute("SELECT pg_stat_statements_reset()");
                Map<String, double[]> times = new LinkedHashMap<>();
                cycles.keySet().forEach(k -> times.put(k, new double[rounds]));
                List<String> order = new ArrayList<>(cycles.keySet());
                for (int r = 0; r < rounds; r++) {
                    Collections.rotate(order, 1);
                    for (String k : order) {
                        Cycle cycle = cycles.get(k);
                        long t0 = System.nanoTime();
                        for (int i = 0; i < ops; i++) {
                            cycle.run();
                        }
                        times.get(k)[r] = (System.nanoTime() - t0) / 1e3 / ops;
                    }
                }
                report(times, rounds);
                statements(st, rounds * ops);
                tables(st);
            }
        }
    }

    private static Map<String, Cycle> cycles(LockSpace space, Connection c, PostgresSql sql) throws Exception {
        NamedSql lock = field(sql, "exclusive");
        NamedSql lockRelease = field(sql, "releaseExclusive");
        NamedSql permit = field(sql, "permitLockAndDecide");
        NamedSql permitRelease = field(sql, "releaseShared");
        NamedSql rowGrant = rowGrant(sql);
        NamedSql rowRelease = rowRelease(sql);
        NamedSql jsonGrant = jsonGrant(sql);
        NamedSql jsonRelease = jsonRelease(sql);
        String owner = "bench-owner-0123456789abcdef";
        Args lockArgs = args("sql-lock", owner, 0);
        Args permitArgs = args("sql-permit", owner, 3);
        Args rowArgs = args("sql-row-permit", owner, 3);
        Args jsonArgs = args("sql-json-permit", owner, 3);
        Map<String, Cycle> cycles = new LinkedHashMap<>();
        cycles.put("lib lock", () -> {
            try (Lease l = space.lock("lib-lock").tryAcquire().orElseThrow()) {
                l.token();
            }
        });
        cycles.put("lib permit", () -> {
            try (Lease l = space.lock("lib-permit").limit(3).tryAcquire().orElseThrow()) {
                l.token();
            }
        });
        cycles.put("sql lock", () -> {
            expect(firstLong(c, lock, lockArgs) > 0, "lock grant");
            expect(update(c, lockRelease, lockArgs) == 1, "lock release");
        });
        cycles.put("sql permit", () -> {
            expect(firstLong(c, permit, permitArgs) > 0, "permit grant");
            expect(firstLong(c, permitRelease, permitArgs) > 0, "permit release");
        });
        cycles.put("sql row permit", () -> {
            expect(firstLong(c, rowGrant, rowArgs) > 0, "row permit grant");
            expect(update(c, rowRelease, rowArgs) == 1, "row permit release");
        });
        cycles.put("sql json permit", () -> {
            expect(firstLong(c, jsonGrant, jsonArgs) > 0, "json permit grant");
            expect(update(c, jsonRelease, jsonArgs) == 1, "json permit release");
        });
        return cycles;
    }

    private static final String UNTIL = "(now() + make_interval(secs => CAST(:lease AS double precision) / 1000))";

    /**
     * The first prototype's grant: the holder appended to the row's arrays (owner, token, expiry,
     * since, lease: what {@code status} shows), counted by the arrays' length.
     */
    private static NamedSql rowGrant(PostgresSql sql) {
        return grant(
                sql,
                "h_owner, h_token, h_exp, h_since, h_lease",
                "ARRAY[CAST(:owner AS VARCHAR)], ARRAY[CAST(1 AS BIGINT)], ARRAY[" + UNTIL + "], ARRAY[now()],"
                        + " ARRAY[CAST(:lease AS BIGINT)]",
                "h_owner = t.h_owner || EXCLUDED.h_owner, h_token = t.h_token || (t.token + 1),"
                        + " h_exp = t.h_exp || EXCLUDED.h_exp, h_since = t.h_since || EXCLUDED.h_since,"
                        + " h_lease = t.h_lease || EXCLUDED.h_lease",
                "COALESCE(cardinality(t.h_owner), 0)");
    }

    /**
     * The first prototype's release: the holder taken out of each array by its position.
     */
    private static NamedSql rowRelease(PostgresSql sql) {
        String at = "array_position(t.h_owner, CAST(:owner AS VARCHAR))";
        StringBuilder drop = new StringBuilder("h_owner = array_remove(t.h_owner, CAST(:owner AS VARCHAR))");
        for (String column : List.of("h_token", "h_exp", "h_since", "h_lease")) {
            drop.append(String.format(", %1$s = t.%1$s[1 : %2$s - 1] || t.%1$s[%2$s + 1 :]", column, at));
        }
        return release(sql, drop.toString(), at, "cardinality(t.h_owner) = 1 AND t.h_exp[" + at + "] > now()");
    }

    /**
     * The second prototype's grant: the holders as one JSONB object keyed by owner ({@code
     * {owner: [token, expiry, since, lease]}}), counted in {@code readers}, so that neither the
     * grant nor the release walks the holders.
     */
    private static NamedSql jsonGrant(PostgresSql sql) {
        String holder = "jsonb_build_object(CAST(:owner AS TEXT), jsonb_build_array(%s, " + UNTIL
                + ", now(), CAST(:lease AS BIGINT)))";
        return grant(
                sql,
                "holders",
                String.format(holder, "1"),
                "holders = COALESCE(t.holders, CAST('{}' AS JSONB)) || " + String.format(holder, "t.token + 1"),
                "t.readers");
    }

    /** The second prototype's release: the owner's key removed ({@code jsonb - key}). */
    private static NamedSql jsonRelease(PostgresSql sql) {
        String mine = "t.holders -> CAST(:owner AS TEXT)";
        return release(
                sql,
                "holders = t.holders - CAST(:owner AS TEXT)",
                mine,
                "t.readers = 1 AND CAST(" + mine + " ->> 1 AS TIMESTAMPTZ) > now()");
    }

    /**
     * A prototype's grant, the lock's statement shape: {@code addHolder} sets the holder into the
     * row and {@code count} counts the holders in it. Refused while an exclusive holder or a
     * queued writer holds the name, while plain readers hold it, while a holder in the row has run
     * out ({@code h_min}, the earliest expiry, passed: a cleanup statement would drop it first),
     * while holders of another limit hold it, or while holders and places ahead in line reach the
     * limit. {@code shared_until} stays the latest expiry, as plain locks and readers check it;
     * {@code readers} counts the holders.
     */
    private static NamedSql grant(
            PostgresSql sql, String holderColumns, String firstHolder, String addHolder, String count) {
        String ahead = "(SELECT count(*) FROM " + sql.line + " q WHERE q.name_key = :key AND q.expires_at > now()"
                + " AND (q.ticket < :ticket OR (q.ticket = :ticket AND q.owner < :owner)))";
        return NamedSql.of("INSERT INTO " + ROW_TABLE + " AS t (name_key, name, token, readers, epoch, permits, "
                + holderColumns + ", shared_until, h_min)"
                + " SELECT :key, :name, 1, 1, 0, :limit, " + firstHolder + ", " + UNTIL + ", " + UNTIL
                + " WHERE set_config('synchronous_commit', 'on', true) IS NOT NULL"
                + " ON CONFLICT (name_key) DO UPDATE SET token = t.token + 1, permits = EXCLUDED.permits, "
                + addHolder + ", readers = t.readers + 1,"
                + " shared_until = GREATEST(t.shared_until, EXCLUDED.shared_until), h_min = LEAST(t.h_min, EXCLUDED.h_min),"
                + " owner = NULL, expires_at = NULL, acquired_at = NULL, lease_ms = NULL"
                + " WHERE t.name = EXCLUDED.name AND (t.owner IS NULL OR t.expires_at <= now())"
                + " AND (t.waiter IS NULL OR t.waiter_until <= now())"
                + " AND (t.h_min IS NULL OR t.h_min > now())"
                + " AND (t.permits > 0 OR t.shared_until IS NULL OR t.shared_until <= now())"
                + " AND (t.h_min IS NULL OR t.permits = EXCLUDED.permits)"
                + " AND " + count + " + " + ahead + " < EXCLUDED.permits"
                + " RETURNING t.token");
    }

    /**
     * A prototype's release: {@code dropHolder} takes the holder out of the row (found by {@code
     * held} not being NULL); the last live holder clears {@code shared_until} and {@code h_min}.
     * Committed asynchronously and notifying while the row is wanted, as the lock's release does.
     */
    private static NamedSql release(PostgresSql sql, String dropHolder, String held, String lastLive) {
        return NamedSql.of("UPDATE " + ROW_TABLE + " t SET " + dropHolder + ", readers = t.readers - 1,"
                + " shared_until = CASE WHEN " + lastLive + " THEN NULL ELSE t.shared_until END,"
                + " h_min = CASE WHEN " + lastLive + " THEN NULL ELSE t.h_min END"
                + " WHERE name_key = :key AND " + held + " IS NOT NULL"
                + " AND set_config('synchronous_commit', 'off', true) IS NOT NULL"
                + " AND (wanted_until IS NULL OR wanted_until <= now() OR pg_notify('" + sql.channel()
                + "', name_key) IS NOT NULL)");
    }

    private static Args args(String name, String owner, int limit) {
        return new Args(name, name, owner, 30_000, LockStore.NOT_IN_LINE, 0, 0, limit);
    }

    /** One of the store's statements, by its field's name (they are private to {@link PostgresSql}). */
    private static NamedSql field(PostgresSql sql, String name) throws ReflectiveOperationException {
        Field f = PostgresSql.class.getDeclaredField(name);
        f.setAccessible(true);
        return (NamedSql) f.get(sql);
    }

    private static PreparedStatement prepare(Connection c, NamedSql s, Args a) throws SQLException {
        PreparedStatement ps = c.prepareStatement(s.text);
        s.bind(ps, a);
        return ps;
    }

    /** The first column of the first row of the first result set (after any update counts); -1 if none. */
    private static long firstLong(Connection c, NamedSql s, Args a) throws SQLException {
        try (PreparedStatement ps = prepare(c, s, a)) {
            boolean rows = ps.execute();
            while (!rows) {
                if (ps.getUpdateCount() == -1) {
                    return -1;
                }
                rows = ps.getMoreResults();
            }
            try (ResultSet rs = ps.getResultSet()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    private static int update(Connection c, NamedSql s, Args a) throws SQLException {
        try (PreparedStatement ps = prepare(c, s, a)) {
            return ps.executeUpdate();
        }
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what + " did not succeed on a name nobody else uses");
        }
    }

    private static void report(Map<String, double[]> times, int rounds) {
        double[] libLock = times.get("lib lock");
        double[] sqlLock = times.get("sql lock");
        for (Map.Entry<String, double[]> e : times.entrySet()) {
            double[] x = e.getValue();
            double[] toLib = new double[rounds];
            double[] toSql = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                toLib[r] = x[r] / libLock[r];
                toSql[r] = x[r] / sqlLock[r];
            }
            System.out.printf(
                    "%-15s median %6.1f us/cycle   / lib lock %.3f   / sql lock %.3f (IQR %.3f-%.3f)%n",
                    e.getKey(), median(x), median(toLib), median(toSql), quartile(toSql, 1), quartile(toSql, 3));
        }
        for (String prototype : List.of("sql row permit", "sql json permit")) {
            double[] row = times.get(prototype);
            double[] estimate = new double[rounds];
            for (int r = 0; r < rounds; r++) { // the library's own work per cycle, the lock's, added to the row's SQL
                estimate[r] = (libLock[r] - sqlLock[r] + row[r]) / libLock[r];
            }
            System.out.printf(
                    "%s through the library, estimated (lib lock - sql lock + it) / lib lock: %.3f%n",
                    prototype, median(estimate));
        }
    }

    /** Each statement run at least once per measured cycle: server time per call, planning, buffers, WAL. */
    private static void statements(Statement st, long cycles) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT calls, mean_exec_time * 1000, total_plan_time * 1000 / calls,"
                + " shared_blks_hit + shared_blks_read, wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 90)"
                + " FROM pg_stat_statements WHERE calls >= " + cycles + " ORDER BY mean_exec_time DESC")) {
            while (rs.next()) {
                long calls = rs.getLong(1);
                System.out.printf(
                        "calls %7d exec %6.1f us plan %4.1f us buffers %5.1f WAL %4.0f B  %s%n",
                        calls,
                        rs.getDouble(2),
                        rs.getDouble(3),
                        rs.getDouble(4) / calls,
                        rs.getDouble(5) / calls,
                        rs.getString(6));
            }
        }
    }

    /**
     * The tables' dead rows (a permit's holder row is inserted and deleted every cycle; the lock's
     * row is updated in place), and the plan of the permit decision's holder count after the run.
     */
    private static void tables(Statement st) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT relname, n_live_tup, n_dead_tup, autovacuum_count,"
                + " pg_relation_size(relid) / 8192, pg_indexes_size(relid) / 8192 FROM pg_stat_user_tables"
                + " WHERE relname LIKE '" + TABLE + "%' ORDER BY relname")) {
            while (rs.next()) {
                System.out.printf(
                        "%-14s live %6d dead %7d autovacuums %3d heap pages %5d index pages %5d%n",
                        rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5), rs.getLong(6));
            }
        }
        try (ResultSet rs = st.executeQuery("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT count(*) FROM " + TABLE
                + "_shared h WHERE h.name_key = 'sql-permit' AND h.expires_at > now()")) {
            while (rs.next()) {
                System.out.println("  " + rs.getString(1));
            }
        }
    }

    private static double median(double[] xs) {
        return quartile(xs, 2);
    }

    private static double quartile(double[] xs, int q) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, s.length * q / 4)];
    }
}
