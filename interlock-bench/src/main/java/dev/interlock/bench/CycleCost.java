package dev.interlock.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import redis.clients.jedis.UnifiedJedis;

/**
 * What one uncontended acquire + release costs, one thread, Interlock against the raw floor on the
 * same server: wall time and the JVM's CPU time per cycle (every thread of the process: the
 * caller, the driver's and Interlock's own), alternating the two systems round by round, and on
 * Redis the server's commands per cycle and the server time of its scripts ({@code INFO
 * commandstats}). Where {@link LockThroughput} says how far from the floor a backend is, this says
 * where the difference goes.
 *
 * {@snippet lang="shell" :
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.CycleCost redis 5 20000
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.CycleCost jdbc 5 5000
 * }
 */
public final class CycleCost {
    private CycleCost() {}

    private static final OperatingSystemMXBean OS =
            (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private static final Pattern STAT = Pattern.compile("^cmdstat_([^:]+):calls=(\\d+),usec=(\\d+),");

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: CycleCost jdbc|redis ROUNDS CYCLES");
            System.exit(64);
        }
        String backend = args[0];
        int rounds = Integer.parseInt(args[1]);
        int cycles = Integer.parseInt(args[2]);
        AutoCloseable server;
        String where;
        BenchServers.Redis redis = null;
        if (backend.equals("jdbc")) {
            BenchServers.Postgres pg = BenchServers.Postgres.start();
            server = pg;
            where = pg.url();
        } else if (backend.equals("redis")) {
            redis = BenchServers.Redis.start();
            server = redis;
            where = redis.uri();
        } else {
            throw new IllegalArgumentException("backend must be jdbc or redis, was " + backend);
        }
        try (server;
                LockSystem interlock = LockThroughput.open(backend, "interlock", where);
                LockSystem floor = LockThroughput.open(backend, "floor", where);
                var admin = redis == null ? null : RedisSystems.jedis(where)) {
            LockSystem.Locker a = interlock.newLocker();
            LockSystem.Locker b = floor.newLocker();
            run(a, cycles); // warm-up
            run(b, cycles);
            System.out.printf(
                    Locale.ROOT,
                    "%s, %d rounds of %d cycles, 1 thread, %d cores, Java %s%n",
                    backend,
                    rounds,
                    cycles,
                    Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"));
            List<double[]> ours = new ArrayList<>();
            List<double[]> floors = new ArrayList<>();
            Map<String, long[]> ourCommands = null;
            Map<String, long[]> floorCommands = null;
            for (int r = 0; r < rounds; r++) {
                Map<String, long[]> s0 = stats(admin);
                double[] f = run(b, cycles);
                Map<String, long[]> s1 = stats(admin);
                double[] i = run(a, cycles);
                Map<String, long[]> s2 = stats(admin);
                floors.add(f);
                ours.add(i);
                floorCommands = delta(s0, s1);
                ourCommands = delta(s1, s2);
                System.out.printf(
                        Locale.ROOT,
                        "round %d  floor %7.1f us wall, %6.1f us CPU, %6.1f us server   Interlock %7.1f us wall,"
                                + " %6.1f us CPU, %6.1f us server   ratio %.2f%n",
                        r + 1,
                        f[0],
                        f[1],
                        f[2],
                        i[0],
                        i[1],
                        i[2],
                        i[0] / f[0]);
            }
            System.out.printf(Locale.ROOT, "%nmedian per cycle      wall µs   JVM CPU µs   server CPU µs%n");
            System.out.printf(
                    Locale.ROOT,
                    "raw floor          %10.1f %12.1f %15.1f%n",
                    median(floors, 0),
                    median(floors, 1),
                    median(floors, 2));
            System.out.printf(
                    Locale.ROOT,
                    "Interlock          %10.1f %12.1f %15.1f%n",
                    median(ours, 0),
                    median(ours, 1),
                    median(ours, 2));
            System.out.printf(
                    Locale.ROOT,
                    "ratio              %10.2f %12.2f %15.2f%n",
                    median(ours, 0) / median(floors, 0),
                    median(ours, 1) / median(floors, 1),
                    median(ours, 2) / median(floors, 2));
            if (Boolean.getBoolean("bench.pg.statements") && backend.equals("jdbc")) {
                statements(where, rounds * cycles + cycles);
            }
            if (admin != null) {
                System.out.printf(Locale.ROOT, "%nRedis commands per cycle (last round), calls and server µs%n");
                print("raw floor", floorCommands, cycles);
                print("Interlock", ourCommands, cycles);
            }
        }
    }

    /** Wall, JVM CPU and server CPU µs per cycle over {@code cycles} cycles. */
    private static double[] run(LockSystem.Locker locker, int cycles) throws Exception {
        long s0 = serverCpuNanos();
        long c0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < cycles; i++) {
            locker.acquire("cycle");
            locker.release();
        }
        long t1 = System.nanoTime();
        long c1 = OS.getProcessCpuTime();
        long s1 = serverCpuNanos();
        return new double[] {(t1 - t0) / 1000.0 / cycles, (c1 - c0) / 1000.0 / cycles, (s1 - s0) / 1000.0 / cycles};
    }

    /**
     * CPU time of every server process on this host (PostgreSQL's backends and its WAL writer,
     * or redis-server), from the scheduler's own account ({@code /proc/PID/schedstat}, ns): what
     * the server spends per cycle, commits and network included. 0 where /proc has no such file.
     */
    private static long serverCpuNanos() {
        long sum = 0;
        File[] procs = new File("/proc").listFiles();
        if (procs == null) {
            return 0;
        }
        for (File p : procs) {
            String n = p.getName();
            if (n.isEmpty() || !Character.isDigit(n.charAt(0))) {
                continue;
            }
            try {
                String comm = Files.readString(p.toPath().resolve("comm")).trim();
                if (comm.equals("postgres") || comm.startsWith("redis-server")) {
                    String stat =
                            Files.readString(p.toPath().resolve("schedstat")).trim();
                    sum += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
                }
            } catch (IOException | RuntimeException e) {
                // gone meanwhile
            }
        }
        return sum;
    }

    private static double median(List<double[]> rows, int column) {
        return LockThroughput.median(rows.stream().mapToDouble(r -> r[column]).toArray());
    }

    /** Each statement's calls per cycle and its mean planning and execution time (pg_stat_statements). */
    private static void statements(String url, int cycles) throws SQLException {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            System.out.printf(Locale.ROOT, "%n  calls/cycle  plans/cycle  plan µs  exec µs  statement%n");
            try (ResultSet rs =
                    st.executeQuery("SELECT calls, plans, mean_plan_time, mean_exec_time, query FROM pg_stat_statements"
                            + " WHERE calls >= " + (cycles / 100) + " ORDER BY calls * mean_exec_time DESC")) {
                while (rs.next()) {
                    String q = rs.getString(5).replaceAll("\\s+", " ");
                    System.out.printf(
                            Locale.ROOT,
                            "  %11.2f  %11.2f  %7.1f  %7.1f  %s%n",
                            rs.getLong(1) / (double) cycles,
                            rs.getLong(2) / (double) cycles,
                            rs.getDouble(3) * 1000,
                            rs.getDouble(4) * 1000,
                            q.length() > 110 ? q.substring(0, 110) + "..." : q);
                }
            }
        }
    }

    /** Calls and µs per command, from INFO commandstats; empty without a Redis client. */
    private static Map<String, long[]> stats(UnifiedJedis admin) {
        Map<String, long[]> m = new HashMap<>();
        if (admin == null) {
            return m;
        }
        for (String line : admin.info("commandstats").split("\\r?\\n")) {
            Matcher x = STAT.matcher(line);
            if (x.find()) {
                m.put(
                        x.group(1).toLowerCase(Locale.ROOT),
                        new long[] {Long.parseLong(x.group(2)), Long.parseLong(x.group(3))});
            }
        }
        return m;
    }

    private static Map<String, long[]> delta(Map<String, long[]> from, Map<String, long[]> to) {
        Map<String, long[]> d = new TreeMap<>();
        to.forEach((k, v) -> {
            long[] f = from.getOrDefault(k, new long[2]);
            long calls = v[0] - f[0];
            if (calls > 0 && !k.equals("info")) {
                d.put(k, new long[] {calls, v[1] - f[1]});
            }
        });
        return d;
    }

    private static void print(String label, Map<String, long[]> commands, int cycles) {
        StringBuilder b = new StringBuilder();
        commands.forEach((k, v) -> b.append(
                String.format(Locale.ROOT, " %s %.2f (%.1f µs)", k, (double) v[0] / cycles, (double) v[1] / cycles)));
        System.out.printf(Locale.ROOT, "%-10s%s%n", label, b.length() == 0 ? " -" : b);
        long[] eval = commands.getOrDefault("evalsha", new long[2]);
        if (eval[0] > 0) {
            System.out.printf(
                    Locale.ROOT,
                    "%-10s scripts: %.1f µs of server time per cycle (their commands included)%n",
                    "",
                    (double) eval[1] / cycles);
        }
    }
}
