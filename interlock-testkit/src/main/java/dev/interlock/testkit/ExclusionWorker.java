package dev.interlock.testkit;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A worker process for {@link MultiProcessChecker}: loops {@code acquire → record entry →
 * (exclusive: read the counter file, write it back plus one) → record exit → release}, then writes
 * one line per critical section to its log: {@code MODE TOKEN ENTER_NANOS EXIT_NANOS}.
 * {@code System.nanoTime} is CLOCK_MONOTONIC on Linux, comparable across the processes of a host.
 *
 * <p>Arguments: {@code URI NAME MODES ITERATIONS LOG COUNTER}, MODES being {@code ex}, {@code sh}
 * or {@code mixed} (about one exclusive in three).
 */
public final class ExclusionWorker {
    private ExclusionWorker() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        String modes = args[2];
        int iterations = Integer.parseInt(args[3]);
        Path log = Path.of(args[4]);
        Path counter = Path.of(args[5]);
        StringBuilder out = new StringBuilder();
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        System.out.println("READY");
        System.out.flush();
        try (LockSpace locks = Interlock.open(uri)) {
            for (int i = 0; i < iterations; i++) {
                Mode mode = modes.equals("ex") ? Mode.EXCLUSIVE
                        : modes.equals("sh") ? Mode.SHARED
                        : rnd.nextInt(3) == 0 ? Mode.EXCLUSIVE : Mode.SHARED;
                try (Lease lease = locks.acquire(name, mode, Duration.ofMinutes(2))) {
                    long enter = System.nanoTime();
                    if (mode == Mode.EXCLUSIVE) {
                        increment(counter);
                    } else {
                        Files.readAllBytes(counter);
                    }
                    long exit = System.nanoTime();
                    out.append(mode.shortName()).append(' ').append(lease.token()).append(' ')
                            .append(enter).append(' ').append(exit).append('\n');
                }
            }
        }
        Files.writeString(log, out.toString(), StandardCharsets.US_ASCII);
    }

    /** Seed 002's lost-update test: a plain read-modify-write that loses counts without the lock. */
    static void increment(Path counter) throws IOException {
        String s = Files.exists(counter) ? Files.readString(counter).trim() : "";
        long v = s.isEmpty() ? 0 : Long.parseLong(s);
        Thread.onSpinWait();
        Files.writeString(counter, Long.toString(v + 1));
    }
}
