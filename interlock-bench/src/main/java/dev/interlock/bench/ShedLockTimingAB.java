package dev.interlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.interlock.LockSpace;
import dev.interlock.jdbc.JdbcLockSpaces;
import dev.interlock.jdbc.JdbcOptions;
import dev.interlock.shedlock.InterlockLockProvider;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * ShedLock's timing promises, measured on Interlock {@code jdbc:} through
 * {@link InterlockLockProvider} and on ShedLock's own JDBC provider ({@code JdbcTemplateLockProvider},
 * {@code usingDbTime()}) on the same embedded PostgreSQL, in one JVM, the two systems taking turns
 * (which goes first alternates by round). Node A and node B are two providers of the same system,
 * each on a pool of its own; B tries {@code lock()} every 5 ms. Printed per round, with the
 * medians: when B's grant came after A's, as the earliest and latest it can have been (each grant
 * happens between its {@code lock()} call and return: B's came between {@code B's call - A's return}
 * and {@code B's return - A's call} after A's; a promise "no earlier than d" is kept for certain
 * when the first figure is at least d, broken for certain when the second is below it).
 * <ul>
 * <li><b>Hung job</b>: A locks with {@code lockAtMostFor} 2 s, then 5 s, and never unlocks.
 *     Promise: no earlier than {@code lockAtMostFor}.</li>
 * <li><b>Lost process</b> (Interlock's {@code renewingInBackground()} only; ShedLock's
 *     {@code KeepAliveLockProvider} refuses a {@code lockAtMostFor} under 30 s): A locks, its
 *     renewals (every third of {@code lockAtMostFor}) keep the lock for 1.5 x {@code lockAtMostFor}
 *     while B tries (B getting it then is counted as a failure), then A's pool is cut (every
 *     {@code getConnection} fails, as for a process that died or lost the database). Times from
 *     the moment A's last renewal took its connection (the renewal itself ran a little later, so
 *     the second figure is an upper bound, the first is not a lower one). Promise: no earlier than
 *     {@code lockAtMostFor} after the last renewal, within one renewal period of it.</li>
 * <li><b>Early unlock</b>: A locks with {@code lockAtMostFor} 20 s and {@code lockAtLeastFor}
 *     1 s and unlocks at once. Promise: about 1 s, never less.</li>
 * </ul>
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ShedLockTimingAB 3
 * }
 */
public final class ShedLockTimingAB {
    private static final long TRY_EVERY_MS = 5;
    private static final Duration[] AT_MOST = {Duration.ofSeconds(2), Duration.ofSeconds(5)};
    private static final Duration EARLY_AT_MOST = Duration.ofSeconds(20);
    private static final Duration EARLY_AT_LEAST = Duration.ofSeconds(1);

    private final String url;
    private final Map<String, List<double[]>> seconds = new LinkedHashMap<>();
    private final Map<String, Integer> earlyGrants = new LinkedHashMap<>();

    private ShedLockTimingAB(String url) {
        this.url = url;
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        try (BenchServers.Postgres pg = BenchServers.Postgres.start()) {
            JdbcSystems.execute(
                    pg.url(),
                    "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY,"
                            + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)");
            ShedLockTimingAB bench = new ShedLockTimingAB(pg.url());
            for (int r = 0; r < rounds; r++) {
                bench.round(r);
            }
            bench.print();
        }
    }

    private void round(int r) throws Exception {
        boolean interlockFirst = r % 2 == 0;
        for (Duration atMost : AT_MOST) {
            String hung = "hung job, lockAtMostFor " + atMost.toSeconds() + " s, after A's grant: ";
            for (boolean interlock : new boolean[] {interlockFirst, !interlockFirst}) {
                if (interlock) {
                    record(
                            hung + "Interlock jdbc: (fixed lease)",
                            hungJob(
                                    Node.interlock(url, false),
                                    Node.interlock(url, false),
                                    "hung-i-" + atMost.toSeconds() + "-" + r,
                                    atMost));
                } else {
                    record(
                            hung + "ShedLock JdbcTemplate",
                            hungJob(
                                    Node.shedlock(url),
                                    Node.shedlock(url),
                                    "hung-s-" + atMost.toSeconds() + "-" + r,
                                    atMost));
                }
            }
            record(
                    "lost process, lockAtMostFor " + atMost.toSeconds()
                            + " s, from A's last renewal: Interlock jdbc: renewing",
                    lostProcess("lost-" + atMost.toSeconds() + "-" + r, atMost));
        }
        for (boolean interlock : new boolean[] {interlockFirst, !interlockFirst}) {
            String early = "early unlock, lockAtMostFor 20 s, lockAtLeastFor 1 s, after A's grant: ";
            if (interlock) {
                record(
                        early + "Interlock jdbc:",
                        earlyUnlock(Node.interlock(url, false), Node.interlock(url, false), "early-i-" + r));
            } else {
                record(
                        early + "ShedLock JdbcTemplate",
                        earlyUnlock(Node.shedlock(url), Node.shedlock(url), "early-s-" + r));
            }
        }
    }

    private void record(String what, double[] ms) {
        seconds.computeIfAbsent(what, k -> new ArrayList<>()).add(ms);
        System.out.printf("%-110s %6.3f-%.3f s%n", what, ms[0] / 1e3, ms[1] / 1e3);
    }

    private void print() {
        System.out.println();
        System.out.println("another node first got the lock after (s), per round, and the median:");
        seconds.forEach((what, xs) -> {
            StringBuilder out = new StringBuilder();
            for (double[] x : xs) {
                out.append(String.format(" %.3f-%.3f", x[0] / 1e3, x[1] / 1e3));
            }
            System.out.printf("%-110s%s | median %.3f-%.3f%n", what, out, median(xs, 0) / 1e3, median(xs, 1) / 1e3);
        });
        earlyGrants.forEach(
                (what, n) -> System.out.printf("%s: B got the lock %d times while A was renewing it%n", what, n));
    }

    private static double median(List<double[]> xs, int end) {
        double[] s = xs.stream().mapToDouble(x -> x[end]).sorted().toArray();
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** Milliseconds from A's grant until B's; A never unlocks. */
    private static double[] hungJob(Node a, Node b, String name, Duration atMost) throws InterruptedException {
        try (a;
                b) {
            long before = System.nanoTime();
            a.provider.lock(config(name, atMost, Duration.ZERO)).orElseThrow();
            long after = System.nanoTime();
            return bracket(before, after, firstGrant(b, name, atMost.multipliedBy(4)));
        }
    }

    /** Milliseconds from A's last renewal until B's grant, after A's pool is cut. */
    private double[] lostProcess(String name, Duration atMost) throws InterruptedException {
        Node a = Node.interlock(url, true);
        Node b = Node.interlock(url, false);
        try (a;
                b) {
            String live = "lost process, lockAtMostFor " + atMost.toSeconds() + " s";
            earlyGrants.putIfAbsent(live, 0);
            a.provider.lock(config(name, atMost, Duration.ZERO)).orElseThrow();
            long liveUntil = System.nanoTime() + atMost.toNanos() * 3 / 2;
            while (System.nanoTime() < liveUntil) {
                Optional<SimpleLock> got = b.provider.lock(config(name, atMost, Duration.ZERO));
                if (got.isPresent()) {
                    earlyGrants.merge(live, 1, Integer::sum);
                    got.get().unlock();
                }
                Thread.sleep(TRY_EVERY_MS);
            }
            long lastRenewal = a.pool.cut();
            // The renewal ran after it took its connection: both ends are from that moment.
            return bracket(lastRenewal, lastRenewal, firstGrant(b, name, atMost.multipliedBy(4)));
        }
    }

    /** Milliseconds from A's grant until B's; A unlocks at once, before lockAtLeastFor. */
    private static double[] earlyUnlock(Node a, Node b, String name) throws InterruptedException {
        try (a;
                b) {
            long before = System.nanoTime();
            SimpleLock l =
                    a.provider.lock(config(name, EARLY_AT_MOST, EARLY_AT_LEAST)).orElseThrow();
            long after = System.nanoTime();
            l.unlock();
            return bracket(before, after, firstGrant(b, name, EARLY_AT_MOST.multipliedBy(2)));
        }
    }

    /**
     * Milliseconds from A's grant to B's, as {earliest, latest} it can have been: each grant
     * happened between the call and its return, so B's came between {@code bCall - aReturn}
     * and {@code bReturn - aCall} after A's.
     */
    private static double[] bracket(long aCall, long aReturn, long[] b) {
        return new double[] {(b[0] - aReturn) / 1e6, (b[1] - aCall) / 1e6};
    }

    /** When {@code node}'s first successful {@code lock()} was called and returned (nanoTime), trying every few ms; it unlocks at once. */
    private static long[] firstGrant(Node node, String name, Duration giveUpAfter) throws InterruptedException {
        long end = System.nanoTime() + giveUpAfter.toNanos();
        while (System.nanoTime() < end) {
            long call = System.nanoTime();
            Optional<SimpleLock> got = node.provider.lock(config(name, Duration.ofSeconds(1), Duration.ZERO));
            if (got.isPresent()) {
                long returned = System.nanoTime();
                got.get().unlock();
                return new long[] {call, returned};
            }
            Thread.sleep(TRY_EVERY_MS);
        }
        throw new IllegalStateException(name + ": the other node never got the lock in " + giveUpAfter);
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    /** One node: a provider on a pool of its own. */
    private static final class Node implements AutoCloseable {
        final LockProvider provider;
        final CuttablePool pool;
        private final LockSpace space;

        private Node(LockProvider provider, CuttablePool pool, LockSpace space) {
            this.provider = provider;
            this.pool = pool;
            this.space = space;
        }

        static Node interlock(String url, boolean renewing) {
            CuttablePool pool = new CuttablePool(url);
            LockSpace space = JdbcLockSpaces.open(
                    pool,
                    JdbcOptions.builder()
                            .table("timing_interlock")
                            .createTable(true)
                            .listen(false)
                            .build());
            InterlockLockProvider p = new InterlockLockProvider(space);
            return new Node(renewing ? p.renewingInBackground() : p, pool, space);
        }

        static Node shedlock(String url) {
            CuttablePool pool = new CuttablePool(url);
            return new Node(
                    new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                            .withJdbcTemplate(new JdbcTemplate(pool))
                            .usingDbTime()
                            .build()),
                    pool,
                    null);
        }

        @Override
        public void close() {
            if (space != null) {
                try {
                    space.close(); // after a cut its releases fail, as a lost process's would
                } catch (RuntimeException e) {
                    // the pool was cut
                }
            }
            pool.close();
        }
    }

    /** A small HikariCP pool that can be cut: after {@link #cut()} every {@code getConnection} fails. */
    private static final class CuttablePool extends HikariDataSource {
        private volatile boolean cut;
        private volatile long lastBorrow;

        CuttablePool(String url) {
            super(config(url));
        }

        private static HikariConfig config(String url) {
            HikariConfig c = new HikariConfig();
            c.setJdbcUrl(url);
            c.setMaximumPoolSize(4);
            c.setMinimumIdle(1);
            c.setAutoCommit(true);
            return c;
        }

        /** Cuts the pool off; returns the nanoTime of the last connection given out before. */
        long cut() {
            synchronized (this) {
                cut = true;
                return lastBorrow;
            }
        }

        @Override
        public Connection getConnection() throws SQLException {
            synchronized (this) {
                if (cut) {
                    throw new SQLException("connection refused (the bench cut this node off the database)");
                }
                lastBorrow = System.nanoTime();
            }
            return super.getConnection();
        }
    }
}
