package dev.interlock.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Version;

/**
 * Acquire + release cycles per second of Interlock's {@code jdbc:}, {@code redis:} or {@code zk:} against its
 * peers and a raw floor, all on one server started by this harness, in three columns: 1 thread on
 * 1 name, 8 threads on 8 names (one each: no contention, the server and client under parallel
 * load), 8 threads on 1 name (every cycle is a handoff between threads of this JVM).
 *
 * <p>Each measurement opens the system (its own pool), warms up, counts the cycles completed in a
 * timed window, and closes it again. The systems run one after the other within a round, their
 * order rotated from round to round; every figure is reported per round so the noise shows, and
 * ratios are taken against the floor of the same run.
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.LockThroughput jdbc 3 interlock shedlock spring floor
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.LockThroughput redis 3 interlock redisson shedlock floor
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.LockThroughput zk 3 interlock curator-mutex curator-rw floor
 * }
 * Options (system properties): {@code -Dbench.warmup=3} and {@code -Dbench.seconds=5} (seconds
 * per window), {@code -Dbench.columns=1x1,8x8,8x1}, {@code -Dbench.pg.synchronousCommit=on},
 * {@code -Dbench.fork=true} (each measurement in a JVM of its own).
 */
public final class LockThroughput {
    private LockThroughput() {}

    record Column(int threads, int names) {
        static Column parse(String s) {
            String[] p = s.split("x");
            return new Column(Integer.parseInt(p[0]), Integer.parseInt(p[1]));
        }

        String label() {
            return threads == 1 ? "1 thread" : threads + " threads, " + names + (names == 1 ? " name" : " names");
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 5 && args[0].equals("--one")) {
            one(args[1], args[2], args[3], Column.parse(args[4]));
            return;
        }
        if (args.length < 3) {
            System.err.println(
                    "usage: LockThroughput jdbc|redis|zk ROUNDS SYSTEM...   (the last system named is the floor of the ratios)");
            System.exit(64);
        }
        String backend = args[0];
        int rounds = Integer.parseInt(args[1]);
        List<String> systems = List.of(args).subList(2, args.length);
        long warmup = TimeUnit.SECONDS.toNanos(Long.getLong("bench.warmup", 3));
        long window = TimeUnit.SECONDS.toNanos(Long.getLong("bench.seconds", 5));
        List<Column> columns = new ArrayList<>();
        for (String c : System.getProperty("bench.columns", "1x1,8x8,8x1").split(",")) {
            columns.add(Column.parse(c));
        }
        AutoCloseable server;
        String where;
        String version;
        if (backend.equals("jdbc")) {
            BenchServers.Postgres pg = BenchServers.Postgres.start();
            server = pg;
            where = pg.url();
            try (Connection c = DriverManager.getConnection(where);
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT version()")) {
                rs.next();
                version = rs.getString(1).replaceAll(" on .*", "") + ", synchronous_commit=" + pg.synchronousCommit;
            }
        } else if (backend.equals("redis")) {
            BenchServers.Redis r = BenchServers.Redis.start();
            server = r;
            where = r.uri();
            try (var c = RedisSystems.jedis(where)) {
                version = "Redis "
                        + c.info("server")
                                .lines()
                                .filter(l -> l.startsWith("redis_version:"))
                                .findFirst()
                                .orElse("?")
                                .substring("redis_version:".length())
                                .trim();
            }
        } else if (backend.equals("zk")) {
            TestingServer zk = ZkSystems.server();
            server = zk;
            where = zk.getConnectString();
            version = "ZooKeeper " + Version.getFullVersion().replaceAll("[-, ].*", "") + " (in-process, forceSync="
                    + System.getProperty("zookeeper.forceSync") + ")";
        } else {
            throw new IllegalArgumentException("backend must be jdbc, redis or zk, was " + backend);
        }
        try (server) {
            System.out.printf(
                    Locale.ROOT,
                    "%s; %s; %d cores; Java %s; %s; windows %ds after %ds warm-up%n",
                    LocalDate.now(),
                    version,
                    Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"),
                    backend,
                    TimeUnit.NANOSECONDS.toSeconds(window),
                    TimeUnit.NANOSECONDS.toSeconds(warmup));
            // results[system][column][round]
            Map<String, double[][]> results = new LinkedHashMap<>();
            Map<String, String> labels = new LinkedHashMap<>();
            for (String s : systems) {
                results.put(s, new double[columns.size()][rounds]);
            }
            for (int r = 0; r < rounds; r++) {
                for (int ci = 0; ci < columns.size(); ci++) {
                    Column col = columns.get(ci);
                    for (int k = 0; k < systems.size(); k++) {
                        String s = systems.get((k + r) % systems.size());
                        String label;
                        double[] m;
                        if (FORK) {
                            Object[] o = forked(backend, s, where, col);
                            label = (String) o[0];
                            m = (double[]) o[1];
                        } else {
                            try (LockSystem sys = open(backend, s, where)) {
                                label = sys.label();
                                m = measure(sys, col, warmup, window);
                            }
                        }
                        labels.put(s, label);
                        results.get(s)[ci][r] = m[0];
                        System.out.printf(
                                Locale.ROOT,
                                "round %d  %-18s %-45s %9.0f cycles/s  (JVM CPU %.0f%%)%n",
                                r + 1,
                                col.label(),
                                label,
                                m[0],
                                m[1] * 100);
                    }
                }
            }
            report(results, labels, columns, systems.get(systems.size() - 1));
        }
    }

    /**
     * With {@code -Dbench.fork=true}, each measurement runs in a JVM of its own (same java, class
     * path and {@code bench.*} properties) against the server this process started: what one
     * system left behind in the JVM (another client's threads, garbage, JIT state) cannot slow
     * the next one. Without it, a system measured after Redisson ran slower than the same system
     * measured first.
     */
    private static final boolean FORK = Boolean.getBoolean("bench.fork");

    private static Object[] forked(String backend, String system, String where, Column col) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        for (String k : System.getProperties().stringPropertyNames()) {
            if (k.startsWith("bench.") && !k.equals("bench.fork")) {
                cmd.add("-D" + k + "=" + System.getProperty(k));
            }
        }
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                LockThroughput.class.getName(),
                "--one",
                backend,
                system,
                where,
                col.threads() + "x" + col.names()));
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String label = null;
        double[] m = null;
        try (var out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith("RESULT\t")) {
                    String[] f = line.split("\t");
                    m = new double[] {Double.parseDouble(f[1]), Double.parseDouble(f[2])};
                    label = f[3];
                }
            }
        }
        int exit = p.waitFor();
        if (m == null || exit != 0) {
            throw new IllegalStateException(system + ": the forked measurement failed (exit " + exit + ")");
        }
        return new Object[] {label, m};
    }

    /** The child of {@link #forked}: one measurement, printed as {@code RESULT<TAB>cycles/s<TAB>cpu<TAB>label}. */
    private static void one(String backend, String system, String where, Column col) throws Exception {
        long warmup = TimeUnit.SECONDS.toNanos(Long.getLong("bench.warmup", 3));
        long window = TimeUnit.SECONDS.toNanos(Long.getLong("bench.seconds", 5));
        try (LockSystem sys = open(backend, system, where)) {
            double[] m = measure(sys, col, warmup, window);
            System.out.println("RESULT\t" + m[0] + "\t" + m[1] + "\t" + sys.label());
        }
        System.exit(0); // a client's non-daemon threads must not keep the child alive
    }

    static LockSystem open(String backend, String system, String where) throws Exception {
        switch (backend) {
            case "jdbc":
                return JdbcSystems.open(system, where);
            case "zk":
                return ZkSystems.open(system, where);
            default:
                return RedisSystems.open(system, where);
        }
    }

    /** Cycles per second over the window, and the JVM's CPU time over it as a share of one core. */
    static double[] measure(LockSystem sys, Column col, long warmupNanos, long windowNanos) throws Exception {
        int n = col.threads();
        LockSystem.Locker[] lockers = new LockSystem.Locker[n];
        for (int i = 0; i < n; i++) {
            lockers[i] = sys.newLocker();
        }
        AtomicInteger phase = new AtomicInteger(); // 0 warm-up, 1 counting, 2 stop
        long[] counts = new long[n * 16]; // one cache line each
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            int me = i;
            String name = "bench-" + (i % col.names());
            threads[i] = new Thread(
                    () -> {
                        try {
                            int p;
                            while ((p = phase.get()) != 2) {
                                lockers[me].acquire(name);
                                lockers[me].release();
                                if (p == 1) {
                                    counts[me * 16]++;
                                }
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                            phase.set(2);
                        }
                    },
                    "bench-" + i);
            threads[i].start();
        }
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmupNanos));
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        phase.compareAndSet(0, 1);
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(windowNanos));
        phase.compareAndSet(1, 2);
        long t1 = System.nanoTime();
        long cpu1 = os.getProcessCpuTime();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(120));
            if (t.isAlive()) {
                throw new IllegalStateException(sys.label() + ": a thread did not finish its cycle within 120s");
            }
        }
        for (LockSystem.Locker l : lockers) {
            l.close();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(sys.label() + " failed: " + failure.get(), failure.get());
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            total += counts[i * 16];
        }
        double secs = (t1 - t0) / 1e9;
        return new double[] {total / secs, (cpu1 - cpu0) / 1e9 / secs};
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static void report(
            Map<String, double[][]> results, Map<String, String> labels, List<Column> columns, String floor) {
        System.out.println();
        StringBuilder head = new StringBuilder("| system |");
        StringBuilder rule = new StringBuilder("|---|");
        for (Column c : columns) {
            head.append(' ').append(c.label()).append(" |");
            rule.append("---:|");
        }
        System.out.println("cycles/s, median of the rounds (each round in brackets); ratio: floor / system, same run");
        System.out.println(head);
        System.out.println(rule);
        double[][] f = results.get(floor);
        for (Map.Entry<String, double[][]> e : results.entrySet()) {
            StringBuilder row =
                    new StringBuilder("| ").append(labels.get(e.getKey())).append(" |");
            for (int ci = 0; ci < columns.size(); ci++) {
                double[] v = e.getValue()[ci];
                row.append(String.format(Locale.ROOT, " **%.0f** (", median(v)));
                for (int r = 0; r < v.length; r++) {
                    row.append(r > 0 ? " / " : "").append(String.format(Locale.ROOT, "%.0f", v[r]));
                }
                row.append(')');
                if (!e.getKey().equals(floor)) {
                    row.append(String.format(Locale.ROOT, " %.2fx", median(f[ci]) / median(v)));
                }
                row.append(" |");
            }
            System.out.println(row);
        }
    }
}
