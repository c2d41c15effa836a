package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Acquires and releases N distinct names (default 10^6) and prints, every N/10, the heap in use
 * after a GC and the number of open file descriptors: both must stay flat.
 *
 * {@snippet lang="shell" :
 * java -Xmx256m -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.DistinctNames 1000000 /tmp
 * }
 */
public final class DistinctNames {
    private DistinctNames() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        Path dir = Files.createTempDirectory(Path.of(args.length > 1 ? args[1] : "/tmp"), "distinct-");
        long start = System.nanoTime();
        try (LockSpace locks = Interlock.open("flock:" + dir)) {
            for (int i = 0; i <= n; i++) {
                if (i % (n / 10) == 0) {
                    System.gc();
                    long heap = ManagementFactory.getMemoryMXBean()
                            .getHeapMemoryUsage()
                            .getUsed();
                    System.out.printf(
                            Locale.ROOT,
                            "%8d names  heap %6.1f MiB  fds %d  %.1fs%n",
                            i,
                            heap / 1048576.0,
                            fds(),
                            (System.nanoTime() - start) / 1e9);
                }
                if (i < n) {
                    locks.tryAcquire("name-" + i).orElseThrow().close();
                }
            }
        }
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> p.toFile().delete());
        }
        dir.resolve(".gates").toFile().delete();
        dir.toFile().delete();
    }

    static long fds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
