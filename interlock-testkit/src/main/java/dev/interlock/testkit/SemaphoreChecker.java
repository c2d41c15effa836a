package dev.interlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Runs K {@link SemaphoreWorker} processes against one semaphore of N permits and proves: never
 * more than N holders at once (every holder found a free slot among N, a rule that needs no
 * clock), every process had its turns, tokens unique, and tokens increasing in grant order (a
 * permit released before another was even asked for has the smaller token; all workers run on
 * this host, so their monotonic clocks agree).
 */
public final class SemaphoreChecker {
    private SemaphoreChecker() {}

    /** One permit held, as a worker logged it. */
    public record Held(String worker, long token, int slot, long asked, long enter, long exit) {}

    /** Runs the workers and checks their logs; returns every section, for further checks. */
    public static List<Held> run(String uri, String name, int limit, int processes, int iterations, Path work)
            throws IOException, InterruptedException {
        Path slots = Files.createDirectories(work.resolve("slots"));
        Path go = work.resolve("go");
        List<Process> procs = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                Path log = work.resolve("permit-worker-" + i + ".log");
                logs.add(log);
                procs.add(ChildJvm.start(
                        SemaphoreWorker.class,
                        uri,
                        name,
                        Integer.toString(limit),
                        Integer.toString(iterations),
                        slots.toString(),
                        go.toString(),
                        log.toString()));
            }
            await().atMost(Timing.seconds(60)).until(() -> {
                for (int i = 0; i < procs.size(); i++) {
                    if (!procs.get(i).isAlive()) {
                        throw new AssertionError("worker " + i + " ended before the start, status "
                                + procs.get(i).exitValue());
                    }
                }
                return logs.stream().allMatch(l -> Files.exists(Path.of(l + ".ready")));
            });
            Files.createFile(go);
            long deadline = System.nanoTime() + Timing.seconds(120).toNanos();
            for (Process p : procs) {
                assertThat(p.waitFor(Math.max(deadline - System.nanoTime(), 0), TimeUnit.NANOSECONDS))
                        .as("worker finished in time")
                        .isTrue();
                assertThat(p.exitValue()).as("worker exit status").isZero();
            }
        } finally {
            for (Process p : procs) {
                p.destroyForcibly();
            }
        }
        List<Held> all = new ArrayList<>();
        for (Path log : logs) {
            List<String> lines = Files.readAllLines(log);
            assertThat(lines).as("every turn of %s", log.getFileName()).hasSize(iterations);
            for (String line : lines) {
                String[] f = line.split(" ");
                all.add(new Held(
                        log.getFileName().toString(),
                        Long.parseLong(f[0]),
                        Integer.parseInt(f[1]),
                        Long.parseLong(f[2]),
                        Long.parseLong(f[3]),
                        Long.parseLong(f[4])));
            }
        }
        assertThat(all)
                .as("holders that found all %d slots taken: more than %d inside at once", limit, limit)
                .noneMatch(h -> h.slot() < 0);
        Set<Long> tokens = new HashSet<>();
        assertThat(all).as("tokens unique").allMatch(h -> tokens.add(h.token()));
        for (Held a : all) {
            for (Held b : all) {
                // b asked after a was released: b's grant came after a's, whenever each process got to run.
                if (a.exit() < b.asked() && a.token() >= b.token()) {
                    throw new AssertionError(
                            "token order: " + a + " ended before " + b + " was asked for but has the greater token");
                }
            }
        }
        return all;
    }
}
