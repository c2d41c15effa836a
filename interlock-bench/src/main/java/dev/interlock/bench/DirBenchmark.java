package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.file.internal.LibcFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Uncontended acquire + release of one {@code dir:} name against the raw hard-link dotlock floor
 * (temp create + write, link, unlink, unlink: the classic hard-link dotlock, as liblockfile does it, without its sleeps), with
 * {@code others} other lock names in the same directory (cost must not grow with it). The
 * directory is {@code -Dbench.dir} (default: a new directory under /tmp); run it once on tmpfs
 * ({@code /dev/shm}) and once on disk.
 *
 * {@snippet lang="shell" :
 * mvn -q -o -pl interlock-bench -am package -DskipTests
 * java -Dbench.dir=/dev/shm/dirbench -jar interlock-bench/target/benchmarks.jar DirBenchmark
 * java -Dbench.dir=/var/tmp/dirbench -jar interlock-bench/target/benchmarks.jar DirBenchmark
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(org.openjdk.jmh.annotations.Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DirBenchmark {
    @Param({"10", "100000"})
    int others;

    Path dir;
    LockSpace locks;
    byte[] tmp;
    byte[] lock;
    final byte[] record = "pid 12345 host bench since 2026-01-01T00:00:00Z\n".getBytes(StandardCharsets.US_ASCII);

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        String base = System.getProperty("bench.dir");
        Path parent = base != null ? Files.createDirectories(Path.of(base)) : Files.createTempDirectory("dir-bench");
        dir = Files.createDirectories(parent.resolve("dir-" + others + "-" + System.nanoTime()));
        locks = Interlock.open("dir:" + dir);
        for (int i = 0; i < others; i++) {
            locks.tryAcquire("other-" + i).orElseThrow().close();
        }
        Path raw = Files.createDirectories(dir.resolve(".raw"));
        for (int i = 0; i < others; i++) {
            Files.createFile(raw.resolve("other-" + i + ".lock"));
        }
        tmp = LibcFiles.path(
                raw.resolve("bench.lock.tmp." + ProcessHandle.current().pid()));
        lock = LibcFiles.path(raw.resolve("bench.lock"));
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
    public int rawHardLinkDotlock() {
        return dotlockRound(tmp, lock, record);
    }

    /**
     * One uncontended round of the classic NFS-safe dotlock (as liblockfile does it): create a unique
     * temp file with the holder's record, link it to the lock name, unlink the temp; later unlink the lock.
     */
    static int dotlockRound(byte[] tmp, byte[] lock, byte[] record) {
        int fd = LibcFiles.openat(
                LibcFiles.AT_FDCWD,
                tmp,
                LibcFiles.O_WRONLY | LibcFiles.O_CREAT | LibcFiles.O_EXCL | LibcFiles.O_CLOEXEC,
                0644);
        if (fd < 0) {
            throw new IllegalStateException("create failed");
        }
        LibcFiles.write(fd, record, record.length);
        LibcFiles.close(fd);
        if (LibcFiles.linkat(LibcFiles.AT_FDCWD, tmp, LibcFiles.AT_FDCWD, lock, 0) != 0) {
            throw new IllegalStateException("link failed: the lock is held");
        }
        LibcFiles.unlinkat(LibcFiles.AT_FDCWD, tmp, 0);
        return LibcFiles.unlinkat(LibcFiles.AT_FDCWD, lock, 0);
    }
}
