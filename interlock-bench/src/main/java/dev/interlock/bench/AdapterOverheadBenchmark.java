package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockMetrics;
import dev.interlock.LockSpace;
import dev.interlock.LockView;
import dev.interlock.mem.MemoryBackend;
import dev.interlock.micrometer.MicrometerLockMetrics;
import dev.interlock.spring.InterlockLockRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
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
 * What an adapter adds to one uncontended acquire + release on {@code mem:}, where the backend
 * costs least and any overhead shows: the direct API ({@code lock(name).acquire()} +
 * {@code close()}), the core's {@code Lock} view, and the Spring registry's lock (obtained once,
 * as a bean's caller would keep it, and obtained per call, as {@code executeLocked} does); and
 * what metrics add to the direct API: {@link LockMetrics#NONE} is the default of every space
 * above, against an implementation whose methods do nothing (the calls and clock readings only)
 * and Micrometer's ({@code SimpleMeterRegistry}).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -jar interlock-bench/target/benchmarks.jar AdapterOverheadBenchmark -f 3 -wi 5 -i 5
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class AdapterOverheadBenchmark {
    String ns;
    LockSpace locks;
    LockView view;
    InterlockLockRegistry registry;
    Lock springLock;
    LockSpace emptyMetrics;
    LockSpace micrometer;

    @Setup(Level.Trial)
    public void setUp() {
        ns = "bench-" + UUID.randomUUID();
        locks = Interlock.open("mem:" + ns);
        view = locks.asLock("view");
        registry = new InterlockLockRegistry(locks);
        springLock = registry.obtain("spring");
        emptyMetrics =
                Interlock.builder("mem:" + ns).metrics(new LockMetrics() {}).open();
        micrometer = Interlock.builder("mem:" + ns)
                .metrics(MicrometerLockMetrics.of(new SimpleMeterRegistry()))
                .open();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        micrometer.close();
        emptyMetrics.close();
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Benchmark
    public long direct() throws InterruptedException {
        try (Lease l = locks.lock("direct").acquire()) {
            return l.token();
        }
    }

    @Benchmark
    public boolean lockView() {
        view.lock();
        try {
            return view.isHeldByCurrentThread();
        } finally {
            view.unlock();
        }
    }

    @Benchmark
    public boolean springRegistry() {
        springLock.lock();
        try {
            return true;
        } finally {
            springLock.unlock();
        }
    }

    @Benchmark
    public boolean springRegistryObtainEachTime() {
        Lock l = registry.obtain("spring-obtain");
        l.lock();
        try {
            return true;
        } finally {
            l.unlock();
        }
    }

    @Benchmark
    public long metricsDoingNothing() throws InterruptedException {
        try (Lease l = emptyMetrics.lock("empty").acquire()) {
            return l.token();
        }
    }

    @Benchmark
    public long metricsMicrometer() throws InterruptedException {
        try (Lease l = micrometer.lock("micrometer").acquire()) {
            return l.token();
        }
    }
}
