package dev.interlock.bench;

import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;

/**
 * The benchmark suite in one command: every backend against its floor and a peer, in one run, on
 * the servers it starts itself, written to {@code docs/bench/suite.md} with the machine, the
 * versions and the date, and two charts rendered here as SVG:
 *
 * <ul>
 *   <li>hand-off latency, as a distribution (the share of hand-offs faster than x), from
 *       {@link Handoff}'s ping-pong of two processes;</li>
 *   <li>throughput against the number of contending processes (1, 2, 4, 8, 16 by default), each
 *       process taking and giving back one lock in a loop for the same window.</li>
 * </ul>
 *
 * The floors: blocking {@code flock(2)} for the file backends (what {@code flock(1)} does), the
 * one-statement lease for PostgreSQL, {@code SET NX PX} with a compare-and-delete for Redis (see
 * {@link JdbcSystems} and {@link RedisSystems}). The peers: Spring Integration's
 * {@code JdbcLockRegistry} and Redisson. The hand-written analysis stays in
 * {@code docs/benchmarks.md}, which links the suite's page.
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -Dbench.warmMs=2000 -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Suite docs/bench
 * }
 * Options (system properties): {@code -Dbench.seconds=4} (window per point),
 * {@code -Dbench.procs=1,2,4,8,16}, {@code -Dbench.rounds=600} (hand-offs per kind),
 * {@code -Dbench.handoff=raw,flock,...} and {@code -Dbench.curve=raw,flock,...} (the kinds, as
 * {@link Handoff} names them), {@code -Dbench.dir=/tmp} (where the file backends' locks live),
 * {@code -Dbench.warmMs=1000} and {@code -Dbench.warmMsPerProcess=0} (the warm-up before each
 * window: the JIT of many JVMs on few cores takes seconds).
 */
public final class Suite {
    private Suite() {}

    private static final String HANDOFF_KINDS =
            "raw,flock,dir,jdbc/floor,jdbc/interlock,jdbc/spring:60,redis/floor,redis/interlock,redis/redisson";
    private static final String CURVE_KINDS = "raw,flock,dir,jdbc/floor,jdbc/interlock,redis/floor,redis/interlock";

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("contend")) {
            contend(args);
            return;
        }
        Path out = Path.of(args.length > 0 ? args[0] : "docs/bench");
        Files.createDirectories(out);
        int seconds = Integer.getInteger("bench.seconds", 4);
        int rounds = Integer.getInteger("bench.rounds", 600);
        List<Integer> procs = new ArrayList<>();
        for (String p : System.getProperty("bench.procs", "1,2,4,8,16").split(",")) {
            procs.add(Integer.parseInt(p.trim()));
        }
        List<String> handoffKinds =
                List.of(System.getProperty("bench.handoff", HANDOFF_KINDS).split(","));
        List<String> curveKinds =
                List.of(System.getProperty("bench.curve", CURVE_KINDS).split(","));
        Path base = Files.createTempDirectory(Path.of(System.getProperty("bench.dir", "/tmp")), "suite-");
        long started = System.nanoTime();

        StringBuilder md = new StringBuilder();
        Map<String, long[]> handoffs = new LinkedHashMap<>();
        Map<String, double[]> curves = new LinkedHashMap<>();
        Map<String, String> labels = new LinkedHashMap<>();
        try (BenchServers.Postgres pg = BenchServers.Postgres.start();
                BenchServers.Redis redis = BenchServers.Redis.start()) {
            md.append(header(pg, redis, base));
            for (String k : handoffKinds) {
                String[] kr = k.split(":", 2);
                String kind = kr[0];
                String where = where(kind, pg, redis);
                labels.putIfAbsent(kind, Handoff.label(kind, where));
                long[] t = Handoff.run(kind, kr.length > 1 ? Integer.parseInt(kr[1]) : rounds, base, where);
                handoffs.put(kind, t);
                System.out.printf(
                        Locale.ROOT,
                        "hand-off  %-50s p50 %8.1f us  p99 %8.1f us%n",
                        labels.get(kind),
                        Handoff.pct(t, 50) / 1e3,
                        Handoff.pct(t, 99) / 1e3);
            }
            for (String kind : curveKinds) {
                String where = where(kind, pg, redis);
                labels.putIfAbsent(kind, Handoff.label(kind, where));
                double[] c = new double[procs.size()];
                for (int i = 0; i < procs.size(); i++) {
                    c[i] = contention(kind, procs.get(i), base, where, seconds).rate();
                    System.out.printf(
                            Locale.ROOT,
                            "contend   %-50s %2d processes %9.0f cycles/s%n",
                            labels.get(kind),
                            procs.get(i),
                            c[i]);
                }
                curves.put(kind, c);
            }
        } finally {
            Handoff.deleteTree(base);
        }
        md.append(handoffSection(handoffs, labels));
        md.append(curveSection(curves, labels, procs, seconds));
        Files.writeString(
                out.resolve("handoff.svg"),
                Charts.cdf("Hand-off latency: share of hand-offs faster than x", handoffs, labels));
        Files.writeString(
                out.resolve("contention.svg"),
                Charts.curve("Lock cycles per second against contending processes", curves, labels, procs));
        md.append(String.format(
                Locale.ROOT, "%nThe whole suite took %.1f minutes.%n", (System.nanoTime() - started) / 60e9));
        Files.writeString(out.resolve("suite.md"), md.toString());
        System.out.println("wrote " + out.resolve("suite.md") + ", " + out.resolve("handoff.svg") + ", "
                + out.resolve("contention.svg"));
    }

    private static String where(String kind, BenchServers.Postgres pg, BenchServers.Redis redis) {
        return kind.startsWith("jdbc/") ? pg.url() : kind.startsWith("redis/") ? redis.uri() : null;
    }

    // ------------------------------------------------------------------ contention

    /**
     * What {@code n} processes taking and giving back one lock achieved in the window: cycles per
     * second, the time each acquire took (sorted, ns), and the fewest and most cycles of one process.
     */
    record Contended(double rate, long[] waits, long fewest, long most) {}

    /** {@code n} processes taking and giving back one lock for {@code seconds}. */
    static Contended contention(String kind, int n, Path base, String where, int seconds) throws Exception {
        Path control = Files.createTempDirectory(base, "contend-");
        Path locks = Files.createDirectory(control.resolve("locks"));
        List<Process> ps = new ArrayList<>();
        // JIT: each process compiles for seconds, and n processes share the machine's cores.
        long warmMs = Math.max(Long.getLong("bench.warmMs", 1000), Long.getLong("bench.warmMsPerProcess", 0) * n);
        long windowMs = TimeUnit.SECONDS.toMillis(seconds);
        try {
            for (int i = 0; i < n; i++) {
                ps.add(new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java")
                                        .toString(),
                                "-XX:+UseSerialGC",
                                "-cp",
                                System.getProperty("java.class.path"),
                                Suite.class.getName(),
                                "contend",
                                kind,
                                where != null ? where : locks.toString(),
                                control.toString(),
                                Integer.toString(i),
                                Long.toString(warmMs),
                                Long.toString(windowMs))
                        .inheritIO()
                        .start());
            }
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            for (int i = 0; i < n; i++) {
                while (!Files.exists(control.resolve("ready-" + i))) {
                    if (System.nanoTime() > deadline
                            || !ps.get(i).isAlive() && !Files.exists(control.resolve("ready-" + i))) {
                        throw new IllegalStateException(kind + ": contender " + i + " did not start");
                    }
                    Thread.sleep(20);
                }
            }
            Path go = control.resolve("go.tmp");
            Files.writeString(go, Long.toString(System.currentTimeMillis() + 200));
            Files.move(go, control.resolve("go"), StandardCopyOption.ATOMIC_MOVE);
            long total = 0;
            long fewest = Long.MAX_VALUE;
            long most = 0;
            List<long[]> waits = new ArrayList<>();
            int samples = 0;
            for (int i = 0; i < n; i++) {
                Process p = ps.get(i);
                if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    throw new IllegalStateException(kind + ": contender " + i + " failed");
                }
                long count = Long.parseLong(
                        Files.readString(control.resolve("count-" + i)).trim());
                total += count;
                fewest = Math.min(fewest, count);
                most = Math.max(most, count);
                LongBuffer b = ByteBuffer.wrap(Files.readAllBytes(control.resolve("waits-" + i)))
                        .asLongBuffer();
                long[] w = new long[b.remaining()];
                b.get(w);
                waits.add(w);
                samples += w.length;
            }
            long[] all = new long[samples];
            int at = 0;
            for (long[] w : waits) {
                System.arraycopy(w, 0, all, at, w.length);
                at += w.length;
            }
            Arrays.sort(all);
            return new Contended(total / (windowMs / 1000.0), all, fewest, most);
        } finally {
            for (Process p : ps) {
                p.destroyForcibly();
            }
            Handoff.deleteTree(control);
        }
    }

    /** One contender: waits for the go, warms up, counts the cycles completed within the window. */
    private static void contend(String[] a) throws Exception {
        String kind = a[1];
        Path control = Path.of(a[3]);
        String me = a[4];
        long warmMs = Long.parseLong(a[5]);
        long windowMs = Long.parseLong(a[6]);
        HandoffLockers.Locker locker = Handoff.locker(kind, a[2]);
        Files.createFile(control.resolve("ready-" + me));
        Path go = control.resolve("go");
        while (!Files.exists(go)) {
            Thread.sleep(1);
        }
        long t0 = Long.parseLong(Files.readString(go).trim());
        while (System.currentTimeMillis() < t0) {
            Thread.sleep(1);
        }
        long from = t0 + warmMs;
        long to = from + windowMs;
        long count = 0;
        long[] waits = new long[1 << 16]; // the time each counted acquire took, the first 65 536
        long now;
        while ((now = System.currentTimeMillis()) < to) {
            long t = System.nanoTime();
            locker.acquire();
            long waited = System.nanoTime() - t;
            locker.release();
            if (now >= from && System.currentTimeMillis() <= to) {
                if (count < waits.length) {
                    waits[(int) count] = waited;
                }
                count++;
            }
        }
        locker.close();
        ByteBuffer out = ByteBuffer.allocate((int) Math.min(count, waits.length) * 8);
        out.asLongBuffer().put(waits, 0, (int) Math.min(count, waits.length));
        Files.write(control.resolve("waits-" + me), out.array());
        Files.writeString(control.resolve("count-" + me), Long.toString(count));
        System.exit(0);
    }

    // ------------------------------------------------------------------ report

    private static String header(BenchServers.Postgres pg, BenchServers.Redis redis, Path base) throws Exception {
        String pgVersion;
        try (Connection c = DriverManager.getConnection(pg.url());
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SHOW server_version")) {
            rs.next();
            pgVersion = rs.getString(1);
        }
        String redisVersion = "?";
        try (Jedis j = new Jedis("127.0.0.1", redis.port)) {
            for (String line : j.info("server").split("\r?\n")) {
                if (line.startsWith("redis_version:")) {
                    redisVersion = line.substring("redis_version:".length()).trim();
                }
            }
        }
        String cpu = "?";
        for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("model name")) {
                cpu = line.substring(line.indexOf(':') + 1).trim();
                break;
            }
        }
        long memKb = 0;
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                memKb = Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        String kernel = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
        String load = Files.readString(Path.of("/proc/loadavg")).trim();
        return String.format(
                Locale.ROOT,
                "# Benchmark suite results%n%n"
                        + "Written by `dev.interlock.bench.Suite` (do not edit by hand; rerun it). The analysis and the targets are in"
                        + " [benchmarks.md](../benchmarks.md).%n%n"
                        + "| | |%n|---|---|%n"
                        + "| date | %s |%n| machine | %d CPUs (%s), %.1f GiB, Linux %s; load average at start: %s |%n"
                        + "| Java | %s %s |%n| PostgreSQL | %s (embedded, synchronous_commit=%s) |%n| Redis | %s (embedded, no persistence) |%n"
                        + "| file backends | lock directories under %s |%n%n"
                        + "```sh%n./mvnw -q -pl interlock-bench -am package -DskipTests%n"
                        + "java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Suite docs/bench%n```%n",
                ZonedDateTime.now(ZoneOffset.UTC).withNano(0),
                Runtime.getRuntime().availableProcessors(),
                cpu,
                memKb / 1048576.0,
                kernel,
                load,
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                pgVersion,
                pg.synchronousCommit,
                redisVersion,
                base.getParent());
    }

    /** The floor each kind is compared with: blocking flock(2) for the file backends, else its server's floor. */
    static String floorOf(String kind) {
        return kind.startsWith("jdbc/") ? "jdbc/floor" : kind.startsWith("redis/") ? "redis/floor" : "raw";
    }

    private static String handoffSection(Map<String, long[]> handoffs, Map<String, String> labels) {
        StringBuilder s = new StringBuilder(
                String.format(
                        Locale.ROOT,
                        "%n## Hand-off latency%n%n"
                                + "Two processes pass one lock back and forth; the waiter is parked in its acquire when the holder stamps the"
                                + " time and releases (`Handoff`). Ratio: p50 against the floor of the same backend, same run.%n%n"
                                + "![hand-off latency distribution](handoff.svg)%n%n"
                                + "| lock | hand-offs | p50 | p90 | p99 | max | p50 / floor |%n|---|---:|---:|---:|---:|---:|---:|%n"));
        for (Map.Entry<String, long[]> e : handoffs.entrySet()) {
            long[] t = e.getValue();
            long[] floor = handoffs.get(floorOf(e.getKey()));
            String ratio = floor == null || floor == t
                    ? ""
                    : String.format(Locale.ROOT, "%.1fx", Handoff.pct(t, 50) / (double) Handoff.pct(floor, 50));
            s.append(String.format(
                    Locale.ROOT,
                    "| %s | %d | %s | %s | %s | %s | %s |%n",
                    labels.get(e.getKey()),
                    t.length,
                    ms(Handoff.pct(t, 50)),
                    ms(Handoff.pct(t, 90)),
                    ms(Handoff.pct(t, 99)),
                    ms(t[t.length - 1]),
                    ratio));
        }
        return s.toString();
    }

    /** The warm-up of each contention point, as the contenders compute it ({@code bench.warmMs}, {@code bench.warmMsPerProcess}). */
    private static String warmUp() {
        long ms = Long.getLong("bench.warmMs", 1000);
        long perProcess = Long.getLong("bench.warmMsPerProcess", 0);
        String base = ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
        return perProcess == 0 ? base : "at least " + base + " (" + perProcess + " ms per process)";
    }

    private static String curveSection(
            Map<String, double[]> curves, Map<String, String> labels, List<Integer> procs, int seconds) {
        StringBuilder s = new StringBuilder(String.format(
                Locale.ROOT,
                "%n## Throughput against contending processes%n%n"
                        + "N processes on one host take and give back one lock in a loop, each by its own means of waiting; cycles"
                        + " completed in a %d s window after %s of warm-up, summed over the processes. In brackets: the floor of the"
                        + " same backend divided by this figure (same run).%n%n![throughput against processes](contention.svg)%n%n| lock |",
                seconds,
                warmUp()));
        StringBuilder rule = new StringBuilder("|---|");
        for (int p : procs) {
            s.append(' ').append(p).append(p == 1 ? " process |" : " processes |");
            rule.append("---:|");
        }
        s.append(String.format("%n")).append(rule).append(String.format("%n"));
        for (Map.Entry<String, double[]> e : curves.entrySet()) {
            double[] floor = curves.get(floorOf(e.getKey()));
            s.append("| ").append(labels.get(e.getKey())).append(" |");
            for (int i = 0; i < procs.size(); i++) {
                double v = e.getValue()[i];
                s.append(String.format(Locale.ROOT, " %.0f", v));
                if (floor != null && floor != e.getValue() && v > 0) {
                    s.append(String.format(Locale.ROOT, " (%.2fx)", floor[i] / v));
                }
                s.append(" |");
            }
            s.append(String.format("%n"));
        }
        return s.toString();
    }

    private static String ms(long nanos) {
        return nanos >= 10_000_000
                ? String.format(Locale.ROOT, "%.0f ms", nanos / 1e6)
                : String.format(Locale.ROOT, "%.3f ms", nanos / 1e6);
    }

    // ------------------------------------------------------------------ charts

    /** Two small SVG line charts, drawn by hand: no plotting library for two figures. */
    static final class Charts {
        private static final String[] COLORS = {
            "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"
        };
        private static final int W = 960;
        private static final int H = 480;
        private static final int LEFT = 80;
        private static final int RIGHT = 400;
        private static final int TOP = 40;
        private static final int BOTTOM = 60;

        private Charts() {}

        /** The empirical distribution of each kind's hand-offs, on a logarithmic time axis (up to p99.5). */
        static String cdf(String title, Map<String, long[]> samples, Map<String, String> labels) {
            double lo = Double.MAX_VALUE;
            double hi = 0;
            for (long[] t : samples.values()) {
                lo = Math.min(lo, Math.max(1_000, t[0]));
                hi = Math.max(hi, Handoff.pct(t, 99.5));
            }
            double lx0 = Math.floor(Math.log10(lo / 1e3));
            double lx1 = Math.ceil(Math.log10(hi / 1e3));
            StringBuilder svg = start(title, "hand-off latency (µs, log scale)", "share of hand-offs (%)");
            for (double d = lx0; d <= lx1; d++) {
                double x = x(d, lx0, lx1);
                svg.append(line(x, TOP, x, H - BOTTOM, "#ddd"))
                        .append(text(x, H - BOTTOM + 18, fmt(Math.pow(10, d)), "middle"));
            }
            for (int p = 0; p <= 100; p += 25) {
                double y = y(p, 0, 100);
                svg.append(line(LEFT, y, W - RIGHT, y, "#ddd"))
                        .append(text(LEFT - 8, y + 4, Integer.toString(p), "end"));
            }
            int i = 0;
            for (Map.Entry<String, long[]> e : samples.entrySet()) {
                long[] t = e.getValue();
                StringBuilder pts = new StringBuilder();
                int step = Math.max(1, t.length / 400);
                for (int j = 0; j < t.length; j += step) {
                    double share = 100.0 * (j + 1) / t.length;
                    if (share > 99.5) {
                        break;
                    }
                    double lx = Math.log10(Math.max(1_000, t[j]) / 1e3);
                    pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(lx, lx0, lx1), y(share, 0, 100)));
                }
                svg.append(polyline(pts.toString(), COLORS[i % COLORS.length]))
                        .append(legend(i, labels.get(e.getKey())));
                i++;
            }
            return svg.append("</svg>\n").toString();
        }

        /** Cycles per second against the number of processes, both axes logarithmic. */
        static String curve(
                String title, Map<String, double[]> curves, Map<String, String> labels, List<Integer> procs) {
            double lo = Double.MAX_VALUE;
            double hi = 0;
            for (double[] c : curves.values()) {
                for (double v : c) {
                    if (v > 0) {
                        lo = Math.min(lo, v);
                        hi = Math.max(hi, v);
                    }
                }
            }
            double ly0 = Math.floor(Math.log10(lo));
            double ly1 = Math.ceil(Math.log10(hi));
            double lx0 = Math.log(procs.get(0)) / Math.log(2);
            double lx1 = Math.max(lx0 + 1, Math.log(procs.get(procs.size() - 1)) / Math.log(2));
            StringBuilder svg = start(title, "contending processes (log scale)", "cycles per second (log scale)");
            for (int p : procs) {
                double x = x(Math.log(p) / Math.log(2), lx0, lx1);
                svg.append(line(x, TOP, x, H - BOTTOM, "#ddd"))
                        .append(text(x, H - BOTTOM + 18, Integer.toString(p), "middle"));
            }
            for (double d = ly0; d <= ly1; d++) {
                double y = y(d, ly0, ly1);
                svg.append(line(LEFT, y, W - RIGHT, y, "#ddd"))
                        .append(text(LEFT - 8, y + 4, fmt(Math.pow(10, d)), "end"));
            }
            int i = 0;
            for (Map.Entry<String, double[]> e : curves.entrySet()) {
                StringBuilder pts = new StringBuilder();
                String color = COLORS[i % COLORS.length];
                for (int j = 0; j < procs.size(); j++) {
                    double v = e.getValue()[j];
                    if (v <= 0) {
                        continue;
                    }
                    double x = x(Math.log(procs.get(j)) / Math.log(2), lx0, lx1);
                    double y = y(Math.log10(v), ly0, ly1);
                    pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                    svg.append(String.format(
                            Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y, color));
                }
                svg.append(polyline(pts.toString(), color)).append(legend(i, labels.get(e.getKey())));
                i++;
            }
            return svg.append("</svg>\n").toString();
        }

        private static StringBuilder start(String title, String xTitle, String yTitle) {
            StringBuilder s = new StringBuilder();
            s.append(String.format(
                    Locale.ROOT,
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                            + " font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                    W,
                    H,
                    W,
                    H));
            s.append(text(LEFT + (W - LEFT - RIGHT) / 2.0, 22, esc(title), "middle")
                    .replace("<text", "<text font-size=\"15\""));
            s.append(text(LEFT + (W - LEFT - RIGHT) / 2.0, H - 18, esc(xTitle), "middle"));
            s.append(String.format(
                    Locale.ROOT,
                    "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\">%s</text>%n",
                    TOP + (H - TOP - BOTTOM) / 2.0,
                    TOP + (H - TOP - BOTTOM) / 2.0,
                    esc(yTitle)));
            s.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n",
                    LEFT,
                    TOP,
                    W - LEFT - RIGHT,
                    H - TOP - BOTTOM));
            return s;
        }

        private static double x(double v, double v0, double v1) {
            return LEFT + (v - v0) / (v1 - v0) * (W - LEFT - RIGHT);
        }

        private static double y(double v, double v0, double v1) {
            return H - BOTTOM - (v - v0) / (v1 - v0) * (H - TOP - BOTTOM);
        }

        private static String line(double x1, double y1, double x2, double y2, String color) {
            return String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>%n",
                    x1,
                    y1,
                    x2,
                    y2,
                    color);
        }

        private static String text(double x, double y, String s, String anchor) {
            return String.format(
                    Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>%n", x, y, anchor, s);
        }

        private static String polyline(String points, String color) {
            return String.format(
                    Locale.ROOT,
                    "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                    points.trim(),
                    color);
        }

        private static String legend(int i, String label) {
            double y = TOP + 10 + i * 20;
            String color = COLORS[i % COLORS.length];
            return line(W - RIGHT + 12, y, W - RIGHT + 36, y, color).replace("/>", " stroke-width=\"3\"/>")
                    + text(W - RIGHT + 42, y + 4, esc(label), "start");
        }

        private static String fmt(double v) {
            return v >= 1000
                    ? String.format(Locale.ROOT, "%,.0f", v)
                    : v >= 1 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%s", v);
        }

        private static String esc(String s) {
            return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
        }
    }
}
