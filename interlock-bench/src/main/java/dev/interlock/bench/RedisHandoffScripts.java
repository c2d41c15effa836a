package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.RedisClient;

/**
 * N threads of one space passing one {@code redis:} lock around (the "8 threads, 1 name" column
 * of {@link LockThroughput}), with the scripts the server runs per cycle ({@code INFO
 * commandstats}): how many tries a hand-off costs, not only how long it takes.
 *
 * {@snippet lang="shell" :
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.RedisHandoffScripts 8 3 3
 * }
 * Arguments: threads, rounds, seconds a round (after 3 s of warm-up).
 */
public final class RedisHandoffScripts {
    private RedisHandoffScripts() {}

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        try (BenchServers.Redis server = BenchServers.Redis.start();
                LockSpace space = Interlock.open(server.uri());
                RedisClient admin = RedisSystems.jedis(server.uri())) {
            AtomicLong cycles = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Thread t = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            Lease l = space.lock("handoff")
                                    .lease(Duration.ofSeconds(30))
                                    .acquire();
                            l.close();
                            cycles.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                t.start();
                workers.add(t);
            }
            Thread.sleep(3000);
            System.out.printf(
                    Locale.ROOT, "%d threads on 1 name, Java %s%n", threads, System.getProperty("java.version"));
            for (int r = 0; r < rounds; r++) {
                long c0 = cycles.get();
                long s0 = scripts(admin);
                long t0 = System.nanoTime();
                Thread.sleep(seconds * 1000L);
                long c1 = cycles.get();
                long s1 = scripts(admin);
                long t1 = System.nanoTime();
                System.out.printf(
                        Locale.ROOT,
                        "round %d  %8.0f cycles/s  %5.2f scripts per cycle%n",
                        r + 1,
                        (c1 - c0) / ((t1 - t0) / 1e9),
                        (s1 - s0) / (double) (c1 - c0));
            }
            stop.set(true);
            for (Thread t : workers) {
                t.join();
            }
        }
    }

    private static long scripts(RedisClient admin) {
        return admin.info("commandstats")
                .lines()
                .filter(l -> l.startsWith("cmdstat_evalsha:") || l.startsWith("cmdstat_eval:"))
                .mapToLong(l -> Long.parseLong(l.replaceAll("^cmdstat_\\w+:calls=(\\d+),.*", "$1")))
                .sum();
    }
}
