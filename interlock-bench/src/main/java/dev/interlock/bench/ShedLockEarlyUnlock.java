package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.shedlock.InterlockLockProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * When another node gets a ShedLock lock that was unlocked before its {@code lockAtLeastFor}:
 * node A locks with {@code lockAtMostFor} 20 s and {@code lockAtLeastFor} 1 s and unlocks at
 * once; node B (another lock space on the same backend) either polls every 10 ms from the unlock
 * on ("watching"), or first looks 1.2 s after it ("late"). ShedLock's promise: about 1 s, never
 * less. Real time, on {@code mem:} and {@code dir:} ({@code jdbc:} and {@code redis:} are checked by
 * the ShedLock contract tests, on their servers' clocks; {@link ShedLockTimingAB} times {@code jdbc:}
 * beside ShedLock's own JDBC provider).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ShedLockEarlyUnlock 3
 * }
 */
public final class ShedLockEarlyUnlock {
    private static final Duration AT_MOST = Duration.ofSeconds(20);
    private static final Duration AT_LEAST = Duration.ofSeconds(1);

    private ShedLockEarlyUnlock() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        Path tmp = Files.createTempDirectory("early-unlock");
        String[] uris = {"mem:early-unlock", "dir:" + tmp.resolve("dir")};
        for (String uri : uris) {
            for (boolean late : new boolean[] {false, true}) {
                StringBuilder out = new StringBuilder();
                for (int r = 0; r < rounds; r++) {
                    out.append(String.format(" %.2f", once(uri, "job-" + late + "-" + r, late) / 1e3));
                }
                System.out.printf(
                        "%-10s %-8s another node got it after (s):%s%n",
                        uri.substring(0, uri.indexOf(':') + 1), late ? "late" : "watching", out);
            }
        }
    }

    /** Milliseconds from the unlock until node B holds the lock. */
    private static double once(String uri, String name, boolean late) throws InterruptedException {
        try (LockSpace a = Interlock.open(uri);
                LockSpace b = Interlock.open(uri)) {
            InterlockLockProvider nodeA = new InterlockLockProvider(a);
            InterlockLockProvider nodeB = new InterlockLockProvider(b);
            SimpleLock l = nodeA.lock(new LockConfiguration(ClockProvider.now(), name, AT_MOST, AT_LEAST))
                    .orElseThrow();
            l.unlock();
            long t0 = System.nanoTime();
            if (late) {
                Thread.sleep(1200);
            }
            while (true) {
                Optional<SimpleLock> got =
                        nodeB.lock(new LockConfiguration(ClockProvider.now(), name, AT_MOST, Duration.ZERO));
                if (got.isPresent()) {
                    double ms = (System.nanoTime() - t0) / 1e6;
                    got.get().unlock();
                    return ms;
                }
                if (System.nanoTime() - t0 > Duration.ofSeconds(30).toNanos()) {
                    return Double.NaN;
                }
                Thread.sleep(10);
            }
        }
    }
}
