package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Scale, per backend: N distinct locks held at once (the acquire cost per tenth of N must stay
 * flat, and the heap per held lease is reported), and S shared holders of one name at once (the
 * same, plus the time of one {@code status} that lists them all).
 *
 * <p>Every lease is 10 minutes and renewed in the background as usual, so the library's own
 * bookkeeping (its renewal and loss-check timers) is in the figures, but no renewal falls in the
 * run. Heap is measured after {@code System.gc()}, before the first and after the last
 * acquisition, on this JVM (the figure includes the backend's client-side objects: a JDBC or Redis
 * client keeps nothing per lock; {@code dir:} keeps its open descriptors).
 *
 * {@snippet lang="shell" :
 * java -Xmx2g -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Scale 100000 1000 mem dir jdbc redis
 * }
 * Arguments: N (default 100000), S (default 1000), then the backends (default: all four).
 * {@code dir:} runs in a directory under {@code -Dbench.dir=/tmp}.
 */
public final class Scale {
    private Scale() {}

    private static final Duration LEASE = Duration.ofMinutes(10);

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int shared = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        List<String> backends =
                args.length > 2 ? List.of(args).subList(2, args.length) : List.of("mem", "dir", "jdbc", "redis");
        System.out.printf(
                Locale.ROOT,
                "%s; %d cores; Java %s; max heap %d MiB; N=%d distinct locks, S=%d shared holders%n",
                LocalDate.now(),
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20,
                n,
                shared);
        BenchServers.Postgres pg = null;
        BenchServers.Redis redis = null;
        try {
            for (String b : backends) {
                String uri;
                Path dir = null;
                switch (b) {
                    case "mem":
                        uri = "mem:scale";
                        break;
                    case "dir":
                        dir = Files.createTempDirectory(Path.of(System.getProperty("bench.dir", "/tmp")), "scale-");
                        uri = "dir:" + dir;
                        break;
                    case "jdbc":
                        if (pg == null) {
                            pg = BenchServers.Postgres.start();
                        }
                        uri = pg.url() + "&table=scale_locks&create=true";
                        break;
                    case "redis":
                        if (redis == null) {
                            redis = BenchServers.Redis.start();
                        }
                        uri = redis.uri() + "/0?prefix=scale:";
                        break;
                    default:
                        throw new IllegalArgumentException("unknown backend '" + b + "': use mem, dir, jdbc or redis");
                }
                int count = n;
                if (b.equals("dir")) {
                    long limit = openFilesLimit();
                    if (limit > 0 && n > limit - 1000) {
                        count = (int) (limit - 1000);
                        System.out.printf(
                                Locale.ROOT,
                                "dir    holds one descriptor per held lock: %d at once here (open files limit %d)%n",
                                count,
                                limit);
                    }
                }
                try (LockSpace space = Interlock.open(uri)) {
                    distinct(b, space, count);
                    sharedHolders(b, space, shared);
                }
                if (dir != null) {
                    Handoff.deleteTree(dir);
                }
            }
        } finally {
            if (pg != null) {
                pg.close();
            }
            if (redis != null) {
                redis.close();
            }
        }
    }

    private static void distinct(String backend, LockSpace space, int n) {
        long heapBefore = heapAfterGc();
        List<Lease> held = new ArrayList<>(n);
        int tenth = Math.max(1, n / 10);
        StringBuilder perTenth = new StringBuilder();
        double first = 0;
        double last = 0;
        long t0 = System.nanoTime();
        long batch = t0;
        for (int i = 0; i < n; i++) {
            held.add(space.lock("scale-" + i)
                    .lease(LEASE)
                    .tryAcquire()
                    .orElseThrow(() -> new IllegalStateException("not granted")));
            if ((i + 1) % tenth == 0) {
                long now = System.nanoTime();
                double us = (now - batch) / 1e3 / tenth;
                if (first == 0) {
                    first = us;
                }
                last = us;
                perTenth.append(perTenth.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.0f", us));
                batch = now;
            }
        }
        double acquireS = (System.nanoTime() - t0) / 1e9;
        long heapHeld = heapAfterGc();
        long r0 = System.nanoTime();
        for (Lease l : held) {
            l.close();
        }
        double releaseS = (System.nanoTime() - r0) / 1e9;
        held.clear();
        System.out.printf(
                Locale.ROOT,
                "%-6s %d distinct held: acquire %.1fs (µs each, per tenth: %s; last/first %.2f), heap %.0f bytes/lease,"
                        + " release all %.1fs%n",
                backend,
                n,
                acquireS,
                perTenth,
                last / first,
                (heapHeld - heapBefore) / (double) n,
                releaseS);
    }

    private static void sharedHolders(String backend, LockSpace space, int s) {
        List<Lease> held = new ArrayList<>(s);
        int tenth = Math.max(1, s / 10);
        StringBuilder perTenth = new StringBuilder();
        long t0 = System.nanoTime();
        long batch = t0;
        for (int i = 0; i < s; i++) {
            held.add(space.lock("scale-shared")
                    .mode(Mode.SHARED)
                    .lease(LEASE)
                    .tryAcquire()
                    .orElseThrow(() -> new IllegalStateException("shared hold not granted")));
            if ((i + 1) % tenth == 0) {
                long now = System.nanoTime();
                perTenth.append(perTenth.length() == 0 ? "" : " ")
                        .append(String.format(Locale.ROOT, "%.0f", (now - batch) / 1e3 / tenth));
                batch = now;
            }
        }
        double acquireS = (System.nanoTime() - t0) / 1e9;
        long st = System.nanoTime();
        LockInfo info = space.status("scale-shared");
        double statusMs = (System.nanoTime() - st) / 1e6;
        boolean writerRefused = space.lock("scale-shared").tryAcquire().isEmpty();
        long r0 = System.nanoTime();
        for (Lease l : held) {
            l.close();
        }
        double releaseS = (System.nanoTime() - r0) / 1e9;
        boolean free = space.status("scale-shared").isFree();
        System.out.printf(
                Locale.ROOT,
                "%-6s %d shared holders of one name: acquire %.2fs (µs each, per tenth: %s); status lists %d in %.1f ms;"
                        + " a writer refused: %b; release all %.2fs, then free: %b%n",
                backend,
                s,
                acquireS,
                perTenth,
                info.holders().size(),
                statusMs,
                writerRefused,
                releaseS,
                free);
    }

    /** The soft limit on open files of this process, or -1. */
    private static long openFilesLimit() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
            if (line.startsWith("Max open files")) {
                String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                return f[0].equals("unlimited") ? -1 : Long.parseLong(f[0]);
            }
        }
        return -1;
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
