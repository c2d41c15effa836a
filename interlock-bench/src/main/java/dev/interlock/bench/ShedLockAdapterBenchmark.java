package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.shedlock.InterlockLockProvider;
import dev.interlock.shedlock.InterlockShedLock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What {@code interlock-shedlock} costs over the direct API: uncontended lock + unlock of one name
 * on {@code mem:} (the cheapest backend, so the adapter's share is as large as it can be), through
 * {@link InterlockLockProvider} against the same request made directly (a fixed lease of
 * {@code lockAtMostFor}, exclusive, one try). {@code adapterFreshConfiguration} also builds the
 * {@code LockConfiguration} per run, as ShedLock's executor does; {@code adapterToken} and
 * {@code directCheckedToken} add the task's one read of its fencing token, checked valid;
 * {@code directRenewedLease} is the default request (a lease renewed in the background).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -jar interlock-bench/target/benchmarks.jar ShedLockAdapterBenchmark -f 3 -wi 5 -i 5
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class ShedLockAdapterBenchmark {
    static final Duration AT_MOST = Duration.ofMinutes(1);

    LockSpace locks;
    InterlockLockProvider provider;
    LockConfiguration config;

    @Setup(Level.Trial)
    public void setUp() {
        locks = Interlock.open("mem:shedlock-bench-" + System.nanoTime());
        provider = new InterlockLockProvider(locks);
        config = new LockConfiguration(ClockProvider.now(), "bench", AT_MOST, Duration.ZERO);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        locks.close();
    }

    /** What ShedLock's executor does around a run: lock, unlock. */
    @Benchmark
    public long direct() {
        try (Lease l =
                locks.lock("bench").lease(AT_MOST).fixedLease().tryAcquire().orElseThrow()) {
            return l.hashCode();
        }
    }

    @Benchmark
    public long adapter() {
        SimpleLock l = provider.lock(config).orElseThrow();
        l.unlock();
        return l.hashCode();
    }

    @Benchmark
    public long adapterFreshConfiguration() {
        SimpleLock l = provider.lock(new LockConfiguration(ClockProvider.now(), "bench", AT_MOST, Duration.ZERO))
                .orElseThrow();
        l.unlock();
        return l.hashCode();
    }

    /** The same, with the task taking its fencing token once, checked valid (the lease's deadline is read: one clock read). */
    @Benchmark
    public long directCheckedToken() {
        try (Lease l =
                locks.lock("bench").lease(AT_MOST).fixedLease().tryAcquire().orElseThrow()) {
            if (!l.isValid()) {
                throw new IllegalStateException("lost");
            }
            return l.token();
        }
    }

    @Benchmark
    public long adapterToken() {
        SimpleLock l = provider.lock(config).orElseThrow();
        long token = InterlockShedLock.requireToken();
        l.unlock();
        return token;
    }

    @Benchmark
    public long directRenewedLease() {
        try (Lease l = locks.lock("bench").lease(AT_MOST).tryAcquire().orElseThrow()) {
            return l.hashCode();
        }
    }
}
