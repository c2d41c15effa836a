package dev.interlock.bench;

import java.util.Arrays;

/**
 * The same-run ratios of {@link ShedLockAdapterBenchmark#adapter()} over
 * {@link ShedLockAdapterBenchmark#direct()} (lock + unlock) and of
 * {@link ShedLockAdapterBenchmark#adapterToken()} over
 * {@link ShedLockAdapterBenchmark#directCheckedToken()} (the same plus one checked token read),
 * robust to a shared machine: JMH measures one benchmark
 * after the other, so load that comes and goes (other builds, other benchmarks) lands on one side.
 * Here the two alternate in blocks of {@code ops} calls (order swapped every round) within one
 * JVM, and the verdict is the median of the per-round ratios, with its interquartile range.
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ShedLockAdapterAB 300 20000
 * }
 */
public final class ShedLockAdapterAB {
    private ShedLockAdapterAB() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        ShedLockAdapterBenchmark b = new ShedLockAdapterBenchmark();
        b.setUp();
        try {
            run(b, rounds, ops, false);
            run(b, rounds, ops, true);
        } finally {
            b.tearDown();
        }
    }

    private static void run(ShedLockAdapterBenchmark b, int rounds, int ops, boolean token) {
        long sink = 0;
        for (int i = 0; i < 200_000; i++) { // warm-up, both paths
            sink += token ? b.directCheckedToken() + b.adapterToken() : b.direct() + b.adapter();
        }
        double[] direct = new double[rounds];
        double[] adapter = new double[rounds];
        double[] ratio = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                direct[r] = block(b, false, token, ops);
                adapter[r] = block(b, true, token, ops);
            } else {
                adapter[r] = block(b, true, token, ops);
                direct[r] = block(b, false, token, ops);
            }
            ratio[r] = adapter[r] / direct[r];
        }
        String what = token ? "lock + checked token + unlock" : "lock + unlock";
        System.out.printf("%s: %d rounds x %d ops each side%n", what, rounds, ops);
        System.out.printf("  direct  median %.0f ns/op%n", median(direct));
        System.out.printf("  adapter median %.0f ns/op%n", median(adapter));
        Arrays.sort(ratio);
        System.out.printf(
                "  adapter/direct per round: median %.3f, IQR %.3f-%.3f%n",
                median(ratio), ratio[rounds / 4], ratio[rounds * 3 / 4]);
        if (sink == 42) {
            System.out.println();
        }
    }

    private static double block(ShedLockAdapterBenchmark b, boolean adapter, boolean token, int ops) {
        long sink = 0;
        long t0 = System.nanoTime();
        if (adapter) {
            for (int i = 0; i < ops; i++) {
                sink += token ? b.adapterToken() : b.adapter();
            }
        } else {
            for (int i = 0; i < ops; i++) {
                sink += token ? b.directCheckedToken() : b.direct();
            }
        }
        long t = System.nanoTime() - t0;
        return sink == 0 ? -1 : (double) t / ops;
    }

    private static double median(double[] xs) {
        double[] c = xs.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
