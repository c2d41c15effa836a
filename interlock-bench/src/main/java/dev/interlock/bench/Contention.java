package dev.interlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Many processes passing one lock around on one host: for each number of processes, every kind
 * runs in turn for the same window, each process taking and giving back the lock in a loop (no
 * work while holding it). Reports cycles per second, the time one acquire took (p50, p99, across
 * every process) and the fewest and most cycles of one process (fairness), with ratios against
 * the first kind measured at the same number of processes (by default {@code raw}: blocking
 * {@code flock(2)}, the kernel's own hand-off, which is not fair: a releasing process often takes
 * the lock straight back).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -Dbench.warmMs=3000 -Dbench.warmMsPerProcess=500 -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Contention 8,32 5 /var/tmp raw flock dir
 * }
 * Arguments: process counts, seconds per window, the directory for the lock files, kinds (as
 * {@link Handoff} names them). {@code -Dbench.warmMs} is the warm-up before the window (default
 * 1 000 ms), at least {@code -Dbench.warmMsPerProcess} times the number of processes: the file
 * backends' processes spend their first seconds compiling (a JFR recording of a 4-process
 * {@code dir:} run showed 3.2 s of JIT compilation in each 8-second process), and 32 of them
 * compile on the same two cores.
 */
public final class Contention {
    private Contention() {}

    public static void main(String[] args) throws Exception {
        List<Integer> procs = new ArrayList<>();
        for (String p : (args.length > 0 ? args[0] : "8,32").split(",")) {
            procs.add(Integer.parseInt(p.trim()));
        }
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path base = Files.createTempDirectory(Path.of(args.length > 2 ? args[2] : "/var/tmp"), "contention-");
        List<String> kinds = args.length > 3 ? List.of(args).subList(3, args.length) : List.of("raw", "flock", "dir");
        try {
            System.out.printf(
                    Locale.ROOT,
                    "one lock passed around by N processes for %d s each, lock files under %s; load %s%n",
                    seconds,
                    base,
                    Files.readString(Path.of("/proc/loadavg")).trim());
            System.out.printf(
                    Locale.ROOT,
                    "| processes | kind | cycles/s | acquire p50 | acquire p99 | fewest / most cycles of one process |%n");
            System.out.printf(Locale.ROOT, "|---:|---|---:|---:|---:|---:|%n");
            for (int n : procs) {
                Map<String, Suite.Contended> results = new LinkedHashMap<>();
                for (String kind : kinds) {
                    Suite.Contended c = Suite.contention(kind, n, base, null, seconds);
                    results.put(kind, c);
                    Suite.Contended first = results.values().iterator().next();
                    String ratio = c == first ? "" : String.format(Locale.ROOT, " (%.2f×)", c.rate() / first.rate());
                    if (c.waits().length == 0) {
                        System.out.printf(
                                Locale.ROOT, "| %d | %s | 0 | - | - | 0 / 0 |%n", n, Handoff.label(kind, null));
                        continue;
                    }
                    String p50 = us(Handoff.pct(c.waits(), 50));
                    String p99 = us(Handoff.pct(c.waits(), 99));
                    String p99ratio = c == first || first.waits().length == 0
                            ? ""
                            : String.format(
                                    Locale.ROOT,
                                    " (%.2f×)",
                                    (double) Handoff.pct(c.waits(), 99) / Math.max(1, Handoff.pct(first.waits(), 99)));
                    System.out.printf(
                            Locale.ROOT,
                            "| %d | %s | %.0f%s | %s | %s%s | %d / %d |%n",
                            n,
                            Handoff.label(kind, null),
                            c.rate(),
                            ratio,
                            p50,
                            p99,
                            p99ratio,
                            c.fewest(),
                            c.most());
                }
            }
        } finally {
            Handoff.deleteTree(base);
        }
    }

    private static String us(long nanos) {
        return nanos >= 10_000_000
                ? String.format(Locale.ROOT, "%.1f ms", nanos / 1e6)
                : String.format(Locale.ROOT, "%.0f µs", nanos / 1e3);
    }
}
