package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Cross-process handoff latency on one host: two processes take turns on one lock; each handoff
 * is measured from the moment the holder starts its release to the moment the waiter (already
 * blocked in acquire) has the lock, with {@code System.nanoTime} (CLOCK_MONOTONIC, shared by the
 * processes of a host). Compares {@code dir:} with seed 000's approach (hard-link lock, retry
 * every 100 ms).
 *
 * {@snippet lang="shell" :
 * mvn -q -o -pl interlock-bench -am package -DskipTests
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.DirHandoff /dev/shm/handoff 2000 50
 * }
 * Arguments: a directory, rounds for {@code dir:}, rounds for the seed 000 baseline.
 */
public final class DirHandoff {
    private DirHandoff() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("worker")) {
            worker(args[1], Path.of(args[2]), Integer.parseInt(args[3]));
            return;
        }
        Path base = Files.createDirectories(Path.of(args[0]));
        report("dir:", run("dir", base.resolve("dir-" + System.nanoTime()), Integer.parseInt(args[1])));
        report("seed 000 (link, poll 100 ms)", run("seed000", base.resolve("seed-" + System.nanoTime()), Integer.parseInt(args[2])));
    }

    private static void report(String what, List<Long> ns) {
        Collections.sort(ns);
        System.out.printf("%-30s handoffs %5d  p50 %9.3f ms  p90 %9.3f ms  p99 %9.3f ms  max %9.3f ms%n", what, ns.size(),
                ns.get(ns.size() / 2) / 1e6, ns.get(ns.size() * 9 / 10) / 1e6, ns.get(Math.min(ns.size() - 1, ns.size() * 99 / 100)) / 1e6,
                ns.get(ns.size() - 1) / 1e6);
    }

    private static List<Long> run(String kind, Path dir, int rounds) throws Exception {
        Files.createDirectories(dir);
        List<Process> ps = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ps.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), DirHandoff.class.getName(), "worker", kind, dir.toString(), Integer.toString(rounds))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        List<Long> all = new ArrayList<>();
        for (Process p : ps) {
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    all.add(Long.parseLong(line.trim()));
                }
            }
            p.waitFor();
        }
        return all;
    }

    /** Seed 000's lock: hard-link a unique temp file to NAME.lock; if that fails, sleep 100 ms and retry. */
    private static final class Seed000 {
        final Path lock;
        final Path tmp;

        Seed000(Path dir) {
            lock = dir.resolve("handoff.lock");
            tmp = dir.resolve("handoff.lock.pid." + ProcessHandle.current().pid());
        }

        void lock() throws Exception {
            while (true) {
                Files.writeString(tmp, "pid " + ProcessHandle.current().pid());
                try {
                    Files.createLink(lock, tmp);
                    Files.delete(tmp);
                    return;
                } catch (java.nio.file.FileAlreadyExistsException e) {
                    Files.delete(tmp);
                    Thread.sleep(100);
                }
            }
        }

        void unlock() throws Exception {
            Files.delete(lock);
        }
    }

    private static void worker(String kind, Path dir, int rounds) throws Exception {
        long me = ProcessHandle.current().pid();
        Path released = dir.resolve("released");   // "pid nanos": written just before each release
        Path acquired = dir.resolve("acquired");   // pid of the last acquirer
        LockSpace locks = kind.equals("dir") ? Interlock.open("dir:" + dir.resolve("locks")) : null;
        Seed000 seed = kind.equals("dir") ? null : new Seed000(dir);
        StringBuilder out = new StringBuilder();
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        for (int i = 0; i < rounds && System.nanoTime() < deadline; i++) {
            Lease lease = locks != null ? locks.acquire("handoff", Duration.ofMinutes(1)) : null;
            if (seed != null) {
                seed.lock();
            }
            long got = System.nanoTime();
            if (Files.exists(released)) {
                String[] f = Files.readString(released).trim().split(" ");
                if (f.length == 2 && Long.parseLong(f[0]) != me) {
                    out.append(got - Long.parseLong(f[1])).append('\n');
                }
            }
            write(acquired, Long.toString(me));
            // Hold long enough for the other process to be blocked in acquire.
            long until = System.nanoTime() + 2_000_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            write(released, me + " " + System.nanoTime());
            if (lease != null) {
                lease.close();
            } else {
                seed.unlock();
            }
            // Take turns: wait (outside the lock) until the other process has had it.
            long giveUp = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            while (System.nanoTime() < giveUp) {
                String a = Files.exists(acquired) ? Files.readString(acquired).trim() : "";
                if (!a.isEmpty() && !a.equals(Long.toString(me))) {
                    break;
                }
                LockSupport.parkNanos(20_000);
            }
        }
        if (locks != null) {
            locks.close();
        }
        System.out.print(out);
    }

    private static void write(Path p, String s) throws Exception {
        Path t = p.resolveSibling(p.getFileName() + "." + ProcessHandle.current().pid());
        Files.writeString(t, s);
        Files.move(t, p, StandardCopyOption.ATOMIC_MOVE);
    }
}
