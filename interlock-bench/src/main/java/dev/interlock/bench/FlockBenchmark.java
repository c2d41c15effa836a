package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.file.internal.LibcFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Uncontended acquire + release of one name, {@code flock:} against its floors: the raw
 * {@code open + flock(LOCK_EX) + flock(LOCK_UN) + close} sequence through the same JNA binding,
 * Java's {@code FileChannel.tryLock} (fcntl locks), and an in-process {@code ReentrantLock}.
 * The lock directory is {@code -Dbench.dir} (default: a new directory under /tmp).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -jar interlock-bench/target/benchmarks.jar FlockBenchmark -f 1 -wi 3 -i 5
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(org.openjdk.jmh.annotations.Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FlockBenchmark {
    Path dir;
    LockSpace locks;
    byte[] rawPath;
    Path channelPath;
    final ReentrantLock reentrant = new ReentrantLock();

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        String base = System.getProperty("bench.dir");
        dir = base != null
                ? Files.createDirectories(Path.of(base)).resolve("flock-" + System.nanoTime())
                : Files.createTempDirectory("flock-bench");
        Files.createDirectories(dir);
        locks = Interlock.open("flock:" + dir);
        rawPath = LibcFiles.path(dir.resolve("raw"));
        channelPath = dir.resolve("channel");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        locks.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    public long interlockExclusive() {
        try (Lease l = locks.tryAcquire("bench").orElseThrow()) {
            return l.token();
        }
    }

    @Benchmark
    public long interlockShared() {
        try (Lease l = locks.tryAcquire("bench-shared", Mode.SHARED).orElseThrow()) {
            return l.token();
        }
    }

    @Benchmark
    public int rawOpenFlockUnlockClose() {
        int fd = LibcFiles.openat(
                LibcFiles.AT_FDCWD, rawPath, LibcFiles.O_RDWR | LibcFiles.O_CREAT | LibcFiles.O_CLOEXEC, 0666);
        if (LibcFiles.flock(fd, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB) != 0) {
            throw new IllegalStateException("raw flock failed");
        }
        LibcFiles.flock(fd, LibcFiles.LOCK_UN);
        return LibcFiles.close(fd);
    }

    @Benchmark
    public boolean fileChannelTryLock() throws IOException {
        try (FileChannel ch = FileChannel.open(channelPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock l = ch.tryLock()) {
            return l.isValid();
        }
    }

    @Benchmark
    public boolean reentrantLock() {
        reentrant.lock();
        try {
            return reentrant.isHeldByCurrentThread();
        } finally {
            reentrant.unlock();
        }
    }
}
