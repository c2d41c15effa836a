package dev.interlock.bench;

import java.util.Arrays;

/**
 * The same-run ratios of the Spring registry's lock + unlock over the direct API's acquire + close
 * on {@code mem:} ({@link AdapterOverheadBenchmark#springRegistry()} and
 * {@link AdapterOverheadBenchmark#springRegistryObtainEachTime()} over
 * {@link AdapterOverheadBenchmark#direct()}), robust to a shared machine: JMH measures one
 * benchmark after the other, so load that comes and goes lands on one side. Here the paths
 * alternate in blocks of {@code ops} calls (order rotated every round) within one JVM, and the
 * verdict is the median of the per-round ratios, with its interquartile range.
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.SpringRegistryAB 300 20000
 * }
 */
public final class SpringRegistryAB {
    private SpringRegistryAB() {}

    private static final String[] NAMES = {"direct", "registry (lock kept)", "registry (obtain per call)"};

    public static void main(String[] args) throws InterruptedException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        AdapterOverheadBenchmark b = new AdapterOverheadBenchmark();
        b.setUp();
        try {
            long sink = 0;
            for (int i = 0; i < 200_000; i++) { // warm-up, every path
                sink += b.direct() + (b.springRegistry() ? 1 : 0) + (b.springRegistryObtainEachTime() ? 1 : 0);
            }
            double[][] ns = new double[3][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < 3; k++) {
                    int path = (r + k) % 3;
                    ns[path][r] = block(b, path, ops);
                }
            }
            System.out.printf("lock + unlock on mem:, %d rounds x %d ops each path%n", rounds, ops);
            for (int p = 0; p < 3; p++) {
                System.out.printf(
                        "  %-28s median %.0f ns/op, fastest round %.0f ns/op%n", NAMES[p], median(ns[p]), min(ns[p]));
            }
            for (int p = 1; p < 3; p++) {
                double[] ratio = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ratio[r] = ns[p][r] / ns[0][r];
                }
                Arrays.sort(ratio);
                System.out.printf(
                        "  %s / direct per round: median %.3f, IQR %.3f-%.3f%n",
                        NAMES[p], median(ratio), ratio[rounds / 4], ratio[rounds * 3 / 4]);
            }
            if (sink == 42) {
                System.out.println();
            }
        } finally {
            b.tearDown();
        }
    }

    private static double block(AdapterOverheadBenchmark b, int path, int ops) throws InterruptedException {
        long sink = 0;
        long t0 = System.nanoTime();
        switch (path) {
            case 0 -> {
                for (int i = 0; i < ops; i++) {
                    sink += b.direct();
                }
            }
            case 1 -> {
                for (int i = 0; i < ops; i++) {
                    sink += b.springRegistry() ? 1 : 0;
                }
            }
            default -> {
                for (int i = 0; i < ops; i++) {
                    sink += b.springRegistryObtainEachTime() ? 1 : 0;
                }
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

    private static double min(double[] xs) {
        return Arrays.stream(xs).min().orElse(Double.NaN);
    }
}
