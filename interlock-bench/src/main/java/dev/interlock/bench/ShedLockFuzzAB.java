package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.shedlock.InterlockLockProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's fuzz test, widened to 16 threads, on Interlock's {@code mem:} through
 * {@link InterlockLockProvider} and on an in-memory provider of the shape of ShedLock's own
 * (test-support's {@code InMemoryLockProvider}, which is not published: one monitor over a map
 * of name to locked-until), alternated in one JVM. Threads take turns on two names: each loops
 * {@code lock()} until it gets the lock, increments a plain (non-atomic) counter, and unlocks,
 * until it has done its share; the counters are checked exact. Two shapes: ShedLock's
 * ({@code lockAtLeastFor} 5 ms, a 1 ms sleep under the lock: the time is mostly sleeps and
 * hold-at-least, so what is measured is how the spinning losers slow the holder down), and
 * bare lock/unlock (no sleep, no hold-at-least: the cost of a contended try). Each try builds
 * its {@code LockConfiguration}, as ShedLock's executor does per run: ShedLock's own fuzz test
 * builds two once, so with its in-memory provider {@code lockAtLeastFor} (counted from the
 * configuration's creation) has run out after the first few milliseconds, while Interlock counts
 * it from each grant; with a configuration per try both keep the lock 5 ms per run, and the
 * floor of the first shape is 8 x 25 x 6 ms = 1.2 s.
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ShedLockFuzzAB 9            # both shapes
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ShedLockFuzzAB 9 bare       # one of them
 * }
 */
public final class ShedLockFuzzAB {
    private static final int THREADS = 16;

    private ShedLockFuzzAB() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        String shapes = args.length > 1 ? args[1] : "shedlock,bare";
        if (shapes.contains("shedlock")) {
            run(
                    "ShedLock's shape: lockAtLeastFor 5ms, 1ms sleep under the lock, 16 threads x 25 runs",
                    rounds,
                    Duration.ofMillis(5),
                    true,
                    25);
        }
        if (shapes.contains("bare")) {
            run(
                    "bare lock/unlock: no hold-at-least, no sleep, 16 threads x 20000 runs",
                    rounds,
                    Duration.ZERO,
                    false,
                    20_000);
        }
    }

    private static void run(String what, int rounds, Duration atLeast, boolean sleep, int perThread) throws Exception {
        fuzz(oneMonitor(), atLeast, sleep, perThread / 5); // warm-up, both
        fuzz(interlock("warm"), atLeast, sleep, perThread / 5);
        double[] mem = new double[rounds];
        double[] base = new double[rounds];
        double[] ratio = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                mem[r] = fuzz(interlock("r" + r), atLeast, sleep, perThread);
                base[r] = fuzz(oneMonitor(), atLeast, sleep, perThread);
            } else {
                base[r] = fuzz(oneMonitor(), atLeast, sleep, perThread);
                mem[r] = fuzz(interlock("r" + r), atLeast, sleep, perThread);
            }
            ratio[r] = mem[r] / base[r];
        }
        System.out.printf("%s, %d rounds%n", what, rounds);
        System.out.printf("  Interlock mem: median %.0f ms (min %.0f, max %.0f)%n", median(mem), min(mem), max(mem));
        System.out.printf(
                "  one-monitor in-memory provider: median %.0f ms (min %.0f, max %.0f)%n",
                median(base), min(base), max(base));
        Arrays.sort(ratio);
        System.out.printf(
                "  mem:/in-memory per round: median %.2f, min %.2f, max %.2f%n",
                median(ratio), ratio[0], ratio[rounds - 1]);
    }

    private static LockProvider interlock(String round) {
        LockSpace space = Interlock.open("mem:shedlock-fuzz-" + round + "-" + System.nanoTime());
        return new InterlockLockProvider(space);
    }

    /** Milliseconds for every thread to do its share; checks the counters. */
    private static double fuzz(LockProvider provider, Duration atLeast, boolean sleep, int perThread) throws Exception {
        long[] counters = new long[2];
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        Throwable[] failed = new Throwable[1];
        for (int t = 0; t < THREADS; t++) {
            int job = t % 2;
            String name = "job" + job;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    for (int done = 0; done < perThread; ) {
                        // A configuration per try, as ShedLock's executor makes one per run: its
                        // lockAtLeastFor counts from then (one made once would have run out).
                        Optional<SimpleLock> l = provider.lock(
                                new LockConfiguration(ClockProvider.now(), name, Duration.ofMinutes(5), atLeast));
                        if (l.isPresent()) {
                            long n = counters[job];
                            if (sleep) {
                                Thread.sleep(1);
                            }
                            counters[job] = n + 1;
                            l.get().unlock();
                            done++;
                        }
                    }
                } catch (Throwable e) {
                    failed[0] = e;
                }
            });
            th.start();
            threads.add(th);
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread th : threads) {
            th.join();
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        if (failed[0] != null) {
            throw new IllegalStateException("a fuzz thread failed", failed[0]);
        }
        long expected = (long) THREADS / 2 * perThread;
        if (counters[0] != expected || counters[1] != expected) {
            throw new IllegalStateException(
                    "lost updates: " + counters[0] + " and " + counters[1] + ", expected " + expected);
        }
        if (provider instanceof InterlockLockProvider) {
            ((InterlockLockProvider) provider).space().close();
        }
        return ms;
    }

    /** One monitor over a map of name to locked-until (ShedLock's in-memory provider's shape). */
    private static LockProvider oneMonitor() {
        return new LockProvider() {
            private final Map<String, Instant> lockedUntil = new HashMap<>();

            @Override
            public Optional<SimpleLock> lock(LockConfiguration cfg) {
                synchronized (lockedUntil) {
                    Instant until = lockedUntil.get(cfg.getName());
                    if (until != null && until.isAfter(ClockProvider.now())) {
                        return Optional.empty();
                    }
                    lockedUntil.put(cfg.getName(), cfg.getLockAtMostUntil());
                }
                return Optional.of(new AbstractSimpleLock(cfg) {
                    @Override
                    protected void doUnlock() {
                        synchronized (lockedUntil) {
                            lockedUntil.put(lockConfiguration.getName(), lockConfiguration.getLockAtLeastUntil());
                        }
                    }
                });
            }
        };
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double min(double[] xs) {
        return Arrays.stream(xs).min().orElse(0);
    }

    private static double max(double[] xs) {
        return Arrays.stream(xs).max().orElse(0);
    }
}
