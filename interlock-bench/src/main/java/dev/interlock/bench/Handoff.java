package dev.interlock.bench;

import dev.interlock.bench.HandoffLockers.HardLinkLocker;
import dev.interlock.bench.HandoffLockers.InterlockLocker;
import dev.interlock.bench.HandoffLockers.Locker;
import dev.interlock.bench.HandoffLockers.RawDirLocker;
import dev.interlock.bench.HandoffLockers.RawLocker;
import dev.interlock.bench.HandoffLockers.RawMappedTokenLocker;
import dev.interlock.bench.HandoffLockers.RawTokenLocker;
import dev.interlock.bench.HandoffLockers.SystemLocker;
import dev.interlock.file.internal.KernelWait;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.test.TestingServer;

/**
 * Cross-process handoff latency: two processes pass one lock back and forth; in each round the
 * waiter is already parked in its acquire (the holder waits 2ms after the waiter says it is about
 * to wait) when the holder stamps {@code System.nanoTime()} (CLOCK_MONOTONIC, shared by the
 * processes of a host) and releases; the waiter stamps again as soon as its acquire returns.
 * The difference is the handoff latency. Kinds: {@code raw} (blocking {@code flock(LOCK_EX)}, what
 * util-linux {@code flock(1)} does while it waits: the kernel wakes the sleeper directly),
 * {@code flock} and {@code dir} (Interlock's backends), {@code hardlink} (the classic hard-link dotlock polled
 * every 100 ms). Ratios are against the first kind, measured in the same run.
 *
 * <p>Kinds on a server, which this harness starts once for all of them (see {@link BenchServers}):
 * {@code jdbc/SYSTEM} on PostgreSQL and {@code redis/SYSTEM} on Redis, with the systems of
 * {@link JdbcSystems} ({@code interlock}, {@code shedlock-100ms}, {@code spring}, {@code floor}) and
 * {@link RedisSystems} ({@code interlock}, {@code redisson}, {@code shedlock-100ms}, {@code floor}); {@code zk/SYSTEM} on
 * ZooKeeper with those of {@link ZkSystems} ({@code interlock}, {@code curator-mutex}, {@code curator-rw}, {@code floor}).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -DskipTests
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Handoff 3000 /var/tmp/bench            # raw flock
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Handoff 2000 /dev/shm dir hardlink:80
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Handoff 2000 /tmp jdbc/floor jdbc/interlock jdbc/spring:80 jdbc/shedlock-100ms:80
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Handoff 2000 /tmp redis/floor redis/interlock redis/redisson redis/shedlock-100ms:80
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Handoff 1000 /tmp zk/floor zk/interlock zk/curator-mutex zk/curator-rw
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.Handoff 1000 /tmp flock flock@2 dir dir@2 redis/interlock redis/interlock@2
 * }
 *
 * <p>{@code KIND@N} (Interlock kinds only): the hand-off of a freed <em>permit</em> of a semaphore
 * of N instead of the lock. Process 0 takes N - 1 permits more before the first round and keeps
 * them to the end, so the two processes pass the last permit back and forth: the waiter is parked
 * because every permit is taken, and the release of one wakes it.
 */
public final class Handoff {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final int READY = 0;
    private static final int WAITER_ROUND = 8;
    private static final int RELEASED_AT = 16;
    private static final int ACQUIRED_ROUND = 24;
    private static final int WARMED = 32;
    /**
     * Each child first takes and releases the lock alone for this long ({@code -Dbench.handoffWarmMs},
     * default 1 000; process 1 first, then process 0): without it the 2 000 rounds of a run were
     * timed mostly before the JIT had compiled the acquire path (a probe saw the waiter's path
     * from the wake-up to the return take 110 µs in round 1 000 and 45 µs after round 7 000).
     */
    private static final long WARM_MS = Long.getLong("bench.handoffWarmMs", 1000);

    /** {@code -Dbench.blocks=N}: the kinds take turns in N blocks of their rounds (default 1: one after the other). */
    private static final int BLOCKS = Integer.getInteger("bench.blocks", 1);

    private Handoff() {}

    /** The locks this harness can time, by the name given on the command line. */
    private static final Map<String, String> KINDS = Map.of(
            "raw", "raw flock(2) blocking (flock(1) equivalent)",
            "raw-token", "raw flock(2) blocking + a token read and written",
            "raw-mapped-token", "raw flock(2) blocking + a token in a mapped page",
            "raw-dir", "raw directory lock: mkdir(2), inotify wait, a token read and written",
            "flock", "interlock flock:",
            "flock-inotify", "interlock flock: (inotify wait, as before KernelWait)",
            "dir", "interlock dir: (inotify wake-up)",
            "dir-fair", "interlock dir:?barge=0 (strictly in turn)",
            "hardlink", "hard-link dotlock (retry every 100 ms)");

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child(args);
            return;
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        Path base = Path.of(args.length > 1 ? args[1] : System.getProperty("java.io.tmpdir"));
        List<String> kinds = args.length > 2 ? List.of(args).subList(2, args.length) : List.of("raw", "flock");
        System.out.printf("handoff latency, lock directories under %s; ratios against %s%n", base, kinds.get(0));
        BenchServers.Postgres pg = null;
        BenchServers.Redis redis = null;
        TestingServer zk = null;
        try {
            int n = kinds.size();
            String[] kind = new String[n];
            String[] label = new String[n];
            String[] where = new String[n];
            int[] kindRounds = new int[n];
            for (int i = 0; i < n; i++) {
                String[] kr = kinds.get(i).split(":", 2); // KIND[@N] or KIND[@N]:ROUNDS (hardlink takes 100 ms a round)
                kind[i] = kr[0];
                kindRounds[i] = kr.length > 1 ? Integer.parseInt(kr[1]) : rounds;
                if (kr[0].startsWith("jdbc/")) {
                    if (pg == null) {
                        pg = BenchServers.Postgres.start();
                    }
                    where[i] = pg.url();
                } else if (kr[0].startsWith("redis/")) {
                    if (redis == null) {
                        redis = BenchServers.Redis.start();
                    }
                    where[i] = redis.uri();
                } else if (kr[0].startsWith("zk/")) {
                    if (zk == null) {
                        zk = ZkSystems.server();
                    }
                    where[i] = zk.getConnectString();
                } else if (KINDS.get(baseKind(kr[0])) == null) {
                    throw new IllegalArgumentException(
                            "unknown kind '" + kr[0] + "'; known: " + KINDS.keySet()
                                    + " (each also as KIND@N), jdbc/SYSTEM, redis/SYSTEM, zk/SYSTEM (interlock also as interlock@N)");
                }
                label[i] = label(kr[0], where[i]);
            }
            // Blocks: each kind runs its rounds in BLOCKS parts, the kinds taking turns (in reverse
            // order every other block), so that a VM growing busier or quieter during the run weighs
            // on every kind alike; each block's p50 is also compared with the first kind's.
            long[][] all = new long[n][];
            double[][] blockP50 = new double[n][BLOCKS];
            for (int b = 0; b < BLOCKS; b++) {
                for (int j = 0; j < n; j++) {
                    int i = b % 2 == 0 ? j : n - 1 - j;
                    long[] t = run(kind[i], Math.max(1, kindRounds[i] / BLOCKS), base, where[i]);
                    blockP50[i][b] = pct(t, 50);
                    all[i] = all[i] == null ? t : concat(all[i], t);
                    Arrays.sort(all[i]);
                }
            }
            for (int i = 0; i < n; i++) {
                report(label[i], all[i]);
                if (i > 0) {
                    System.out.printf(
                            Locale.ROOT,
                            "%-45s p50 %.2fx, p99 %.2fx",
                            "  ratio to " + kinds.get(0),
                            pct(all[i], 50) / (double) pct(all[0], 50),
                            pct(all[i], 99) / (double) pct(all[0], 99));
                    if (BLOCKS > 1) {
                        double[] r = new double[BLOCKS];
                        for (int b = 0; b < BLOCKS; b++) {
                            r[b] = blockP50[i][b] / blockP50[0][b];
                        }
                        Arrays.sort(r);
                        System.out.printf(
                                Locale.ROOT,
                                "; p50 ratio per block %.2f-%.2fx, median %.2fx",
                                r[0],
                                r[BLOCKS - 1],
                                BLOCKS % 2 == 1 ? r[BLOCKS / 2] : (r[BLOCKS / 2 - 1] + r[BLOCKS / 2]) / 2);
                    }
                    System.out.println();
                }
            }
        } finally {
            if (pg != null) {
                pg.close();
            }
            if (redis != null) {
                redis.close();
            }
            if (zk != null) {
                zk.close();
            }
        }
    }

    private static long[] concat(long[] a, long[] b) {
        long[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** How the results name {@code kind}: its line in {@link #KINDS}, or the server system's own label. */
    static String label(String kind, String where) throws Exception {
        if (where == null) {
            String base = baseKind(kind);
            String label = base.startsWith("dir?") ? "interlock dir:" + base.substring(3) : KINDS.get(base);
            return permits(kind) > 0 ? label + " limit(" + permits(kind) + ")" : label;
        }
        try (LockSystem sys = serverSystem(kind, where)) {
            return sys.label();
        }
    }

    /** Removes {@code dir} and everything under it, if it exists. */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** A {@code jdbc/SYSTEM}, {@code redis/SYSTEM} or {@code zk/SYSTEM} kind on the server at {@code where}. */
    static LockSystem serverSystem(String kind, String where) throws Exception {
        int limit = permits(kind);
        String system = baseKind(kind).substring(kind.indexOf('/') + 1);
        if (limit > 0) {
            if (!system.equals("interlock")) {
                throw new IllegalArgumentException(kind + ": @N is for Interlock's own systems (SERVER/interlock@N)");
            }
            return kind.startsWith("zk/")
                    ? ZkSemaphoreSystems.interlock(where, limit)
                    : kind.startsWith("jdbc/")
                            ? JdbcSystems.interlock(where, limit)
                            : RedisSemaphoreSystems.interlock(where, limit);
        }
        if (kind.startsWith("zk/")) {
            return ZkSystems.open(system, where);
        }
        return kind.startsWith("jdbc/") ? JdbcSystems.open(system, where) : RedisSystems.open(system, where);
    }

    /** @param where the server's URL for a server kind (given to the children instead of a directory), else null */
    static long[] run(String kind, int rounds, Path base, String where) throws Exception {
        Path dir = Files.createTempDirectory(base, "handoff-");
        Path shm = Files.createTempFile(Path.of("/dev/shm"), "handoff-", ".shm");
        Files.write(shm, new byte[64]);
        List<Process> ps = new ArrayList<>();
        Path[] outs = new Path[2];
        for (int me = 0; me < 2; me++) {
            outs[me] = Files.createTempFile("handoff-" + me, ".out");
            ps.add(new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            Handoff.class.getName(),
                            "child",
                            kind,
                            Integer.toString(me),
                            Integer.toString(rounds),
                            where != null ? where : dir.toString(),
                            shm.toString(),
                            outs[me].toString())
                    .inheritIO()
                    .start());
        }
        for (Process p : ps) {
            if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
                throw new IllegalStateException(kind + " child failed");
            }
        }
        List<Long> all = new ArrayList<>();
        for (Path o : outs) {
            for (String l : Files.readAllLines(o)) {
                all.add(Long.parseLong(l));
            }
            Files.delete(o);
        }
        Files.delete(shm);
        long[] a = all.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(a);
        return a;
    }

    static long pct(long[] sorted, double p) {
        return sorted[(int) Math.min(sorted.length - 1, Math.round(p / 100.0 * (sorted.length - 1)))];
    }

    static void report(String name, long[] s) {
        System.out.printf(
                Locale.ROOT,
                "%-45s n=%d  p50 %7.1f us  p90 %7.1f us  p99 %7.1f us  max %8.1f us%n",
                name,
                s.length,
                pct(s, 50) / 1e3,
                pct(s, 90) / 1e3,
                pct(s, 99) / 1e3,
                s[s.length - 1] / 1e3);
    }

    /** One side of the ping-pong. Process 0 holds first. */
    static void child(String[] a) throws Exception {
        String kind = a[1];
        int me = Integer.parseInt(a[2]);
        int rounds = Integer.parseInt(a[3]);
        String dirOrUrl = a[4];
        MappedByteBuffer m;
        try (FileChannel ch = FileChannel.open(Path.of(a[5]), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 64);
        }
        Locker locker = locker(kind, dirOrUrl);
        List<Locker> kept = new ArrayList<>(); // process 0's other permits of a KIND@N
        StringBuilder out = new StringBuilder();
        int warmup = Math.min(200, rounds / 5);
        if (me == 0) {
            while ((long) LONGS.getVolatile(m, WARMED) == 0) {
                Thread.sleep(1);
            }
        }
        for (long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WARM_MS); System.nanoTime() - end < 0; ) {
            locker.acquire();
            locker.release();
        }
        if (me == 0) {
            for (int p = 1; p < permits(kind); p++) {
                Locker other = locker(kind, dirOrUrl);
                other.acquire();
                kept.add(other);
            }
            locker.acquire();
            LONGS.setVolatile(m, READY, 1L);
        } else {
            LONGS.setVolatile(m, WARMED, 1L);
            while ((long) LONGS.getVolatile(m, READY) == 0) {
                Thread.onSpinWait();
            }
        }
        // Round r: the holder is r % 2.
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == me) {
                while ((long) LONGS.getVolatile(m, WAITER_ROUND) != r + 1) {
                    Thread.onSpinWait();
                }
                Thread.sleep(2); // let the waiter park inside acquire
                LONGS.setVolatile(m, RELEASED_AT, System.nanoTime());
                locker.release();
                // Do not queue again before the waiter holds it (flock is not FIFO: we could steal it back).
                // Park rather than spin: on a 2-core machine a spinning releaser takes the core the
                // waiter it is timing needs.
                while ((long) LONGS.getVolatile(m, ACQUIRED_ROUND) != r + 1) {
                    LockSupport.parkNanos(20_000);
                }
            } else {
                LONGS.setVolatile(m, WAITER_ROUND, (long) r + 1);
                locker.acquire();
                long t = System.nanoTime() - (long) LONGS.getVolatile(m, RELEASED_AT);
                LONGS.setVolatile(m, ACQUIRED_ROUND, (long) r + 1);
                if (r >= warmup) {
                    out.append(t).append('\n');
                }
            }
        }
        if ((rounds - 1) % 2 != me) {
            locker.release();
        }
        Files.writeString(Path.of(a[6]), out);
        for (Locker other : kept) {
            other.release();
            other.close();
        }
        locker.close();
    }

    /** N of a {@code KIND@N}; 0 for the lock. */
    static int permits(String kind) {
        int at = kind.lastIndexOf('@');
        return at < 0 ? 0 : Integer.parseInt(kind.substring(at + 1));
    }

    /** The kind without its {@code @N}. */
    static String baseKind(String kind) {
        int at = kind.lastIndexOf('@');
        return at < 0 ? kind : kind.substring(0, at);
    }

    /** A locker of {@code kind} on the lock directory or server URL {@code dirOrUrl}. */
    static Locker locker(String kind, String dirOrUrl) throws Exception {
        if (permits(kind) > 0 && !kind.contains("/")) {
            String base = baseKind(kind);
            String uri = base.startsWith("dir?") ? "dir:" + dirOrUrl + base.substring(3) : base + ":" + dirOrUrl;
            return new InterlockLocker(uri, permits(kind));
        }
        return kind.contains("/")
                ? new SystemLocker(serverSystem(kind, dirOrUrl))
                : kind.equals("raw")
                        ? new RawLocker(Path.of(dirOrUrl))
                        : kind.equals("raw-token")
                                ? new RawTokenLocker(Path.of(dirOrUrl))
                                : kind.equals("raw-mapped-token")
                                        ? new RawMappedTokenLocker(Path.of(dirOrUrl))
                                        : kind.equals("raw-dir")
                                                ? new RawDirLocker(Path.of(dirOrUrl))
                                                : kind.equals("hardlink")
                                                        ? new HardLinkLocker(Path.of(dirOrUrl))
                                                        : kind.equals("flock-inotify")
                                                                ? inotifyFlock(dirOrUrl)
                                                                : kind.equals("dir-fair")
                                                                        ? new InterlockLocker(
                                                                                "dir:" + dirOrUrl + "?barge=0")
                                                                        : kind.startsWith("dir?")
                                                                                ? new InterlockLocker("dir:" + dirOrUrl
                                                                                        + kind.substring(3))
                                                                                : new InterlockLocker(
                                                                                        kind + ":" + dirOrUrl);
    }

    /** {@code flock:} with its waits on inotify, the path before a waiter slept in flock(2) itself: for A/B runs. */
    private static Locker inotifyFlock(String dir) {
        KernelWait.enable(false);
        return new InterlockLocker("flock:" + dir);
    }
}
