package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Uncontended acquire + release of one permit of a semaphore against the same backend's
 * exclusive lock, same run (docs/semaphores.md; the target: within 1.2×). The two paths alternate
 * in blocks of {@code ops} calls within one JVM (the order swapped every round), each on its own
 * name, and the verdict is the median of the per-round ratios with its interquartile range, so
 * that load that comes and goes on a shared machine lands on both sides. Runs on {@code mem:}, on
 * a Redis the harness starts itself, on {@code dir:} in a new temporary directory, and on
 * {@code jdbc:} on a PostgreSQL it starts itself (a backend given 0 rounds is skipped).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.SemaphoreAB 100 20000 30 500 30 2000
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.SemaphoreAB 0 0 0 0 0 0 30 300
 * }
 * (rounds and calls per block on {@code mem:}, then {@code redis:}, {@code dir:}, {@code jdbc:}); or one
 * backend by its URI: {@code SemaphoreAB flock:/tmp/ab 30 5000} (rounds, calls per block), also
 * {@code jdbc:h2:...} and {@code jdbc:sqlite:...}, whose drivers the jar has; with
 * {@code -Dbench.split=true} the try and the release are also timed apart, with
 * {@code -Dbench.busy=true} a try that finds the name busy
 */
public final class SemaphoreAB {
    /**
     * {@code -Dbench.split=true}: also time each try apart from its release (two clock reads more
     * per cycle on both paths) and print the medians of each part.
     */
    private static final boolean SPLIT = Boolean.getBoolean("bench.split");
    /**
     * {@code -Dbench.busy=true}: also time a try that finds the name busy (the lock held, or all
     * three permits), the two alternated as the cycles are.
     */
    private static final boolean BUSY = Boolean.getBoolean("bench.busy");

    private SemaphoreAB() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].contains(":")) { // one backend by its URI: SemaphoreAB flock:/tmp/ab 30 5000
            try (LockSpace space = Interlock.open(args[0])) {
                compare(args[0], space, Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            }
            return;
        }
        int memRounds = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int memOps = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int redisRounds = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        int redisOps = args.length > 3 ? Integer.parseInt(args[3]) : 500;
        int dirRounds = args.length > 4 ? Integer.parseInt(args[4]) : 30;
        int dirOps = args.length > 5 ? Integer.parseInt(args[5]) : 2_000;
        int jdbcRounds = args.length > 6 ? Integer.parseInt(args[6]) : 0;
        int jdbcOps = args.length > 7 ? Integer.parseInt(args[7]) : 300;
        if (memRounds > 0) {
            try (LockSpace mem = Interlock.open("mem:semaphore-ab")) {
                compare("mem:", mem, memRounds, memOps);
            }
        }
        if (redisRounds > 0) {
            try (BenchServers.Redis redis = BenchServers.Redis.start();
                    LockSpace space = Interlock.open(redis.uri())) {
                compare("redis:", space, redisRounds, redisOps);
            }
        }
        if (dirRounds > 0) {
            Path root = Files.createTempDirectory("semaphore-ab-dir");
            try (LockSpace dir = Interlock.open("dir:" + root)) {
                compare("dir:", dir, dirRounds, dirOps);
            }
        }
        if (jdbcRounds > 0) {
            try (BenchServers.Postgres pg = BenchServers.Postgres.start();
                    LockSpace space = Interlock.open(pg.url() + "&table=semaphore_ab&create=true")) {
                compare("jdbc: (PostgreSQL)", space, jdbcRounds, jdbcOps);
            }
        }
    }

    static void compare(String label, LockSpace space, int rounds, int ops) {
        block(space, false, ops * 5); // warm-up, both paths
        block(space, true, ops * 5);
        double[] lock = new double[rounds];
        double[] permit = new double[rounds];
        double[] lockTry = new double[rounds];
        double[] permitTry = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            double[] l;
            double[] p;
            if (r % 2 == 0) {
                l = block(space, false, ops);
                p = block(space, true, ops);
            } else {
                p = block(space, true, ops);
                l = block(space, false, ops);
            }
            lock[r] = l[0];
            lockTry[r] = l[1];
            permit[r] = p[0];
            permitTry[r] = p[1];
        }
        double[] ratio = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            ratio[r] = permit[r] / lock[r];
        }
        Arrays.sort(ratio);
        System.out.printf("%s uncontended acquire + release, %d rounds x %d ops each path%n", label, rounds, ops);
        System.out.printf(
                "  exclusive lock      median %.0f ns/op, fastest round %.0f ns/op%n", median(lock), min(lock));
        System.out.printf(
                "  permit of limit(3)  median %.0f ns/op, fastest round %.0f ns/op%n", median(permit), min(permit));
        System.out.printf(
                "  permit / lock per round: median %.3f, IQR %.3f-%.3f%n",
                median(ratio), ratio[rounds / 4], ratio[rounds * 3 / 4]);
        if (BUSY) {
            busy(space, rounds, ops);
        }
        if (SPLIT) {
            double[] lockRelease = minus(lock, lockTry);
            double[] permitRelease = minus(permit, permitTry);
            System.out.printf(
                    "  medians of rounds: lock try %.0f ns, release %.0f ns; permit try %.0f ns, release %.0f ns%n",
                    median(lockTry), median(lockRelease), median(permitTry), median(permitRelease));
        }
    }

    /** {@code ops} uncontended acquire + release cycles; ns per cycle, and per try (0 unless {@link #SPLIT}). */
    private static double[] block(LockSpace space, boolean permit, int ops) {
        long sink = 0;
        long tries = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < ops; i++) {
            long asked = SPLIT ? System.nanoTime() : 0;
            Lease l = permit
                    ? space.lock("ab-permit").limit(3).tryAcquire().orElseThrow()
                    : space.lock("ab-lock").tryAcquire().orElseThrow();
            if (SPLIT) {
                tries += System.nanoTime() - asked;
            }
            try (l) {
                sink += l.token();
            }
        }
        long t = System.nanoTime() - t0;
        return new double[] {sink == 0 ? -1 : (double) t / ops, (double) tries / ops};
    }

    /** Busy tries of the lock and of a permit, each name held meanwhile by this space. */
    private static void busy(LockSpace space, int rounds, int ops) {
        List<Lease> held = new ArrayList<>();
        held.add(space.lock("ab-lock").tryAcquire().orElseThrow());
        for (int i = 0; i < 3; i++) {
            held.add(space.lock("ab-permit").limit(3).tryAcquire().orElseThrow());
        }
        double[] lock = new double[rounds];
        double[] permit = new double[rounds];
        for (int r = -2; r < rounds; r++) { // two rounds of warm-up
            for (int k = 0; k < 2; k++) {
                boolean permitTurn = (k + r) % 2 == 0;
                long t0 = System.nanoTime();
                for (int i = 0; i < ops; i++) {
                    Optional<Lease> l = permitTurn
                            ? space.lock("ab-permit").limit(3).tryAcquire()
                            : space.lock("ab-lock").tryAcquire();
                    if (l.isPresent()) {
                        throw new IllegalStateException("a busy try was granted");
                    }
                }
                if (r >= 0) {
                    (permitTurn ? permit : lock)[r] = (double) (System.nanoTime() - t0) / ops;
                }
            }
        }
        held.forEach(Lease::close);
        System.out.printf("  busy try: lock median %.0f ns, permit median %.0f ns%n", median(lock), median(permit));
    }

    private static double[] minus(double[] a, double[] b) {
        double[] d = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i] - b[i];
        }
        return d;
    }

    private static double median(double[] xs) {
        return LockThroughput.median(xs);
    }

    private static double min(double[] xs) {
        return Arrays.stream(xs).min().orElse(Double.NaN);
    }
}
