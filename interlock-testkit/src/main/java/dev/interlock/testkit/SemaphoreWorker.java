package dev.interlock.testkit;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker process of {@link SemaphoreChecker}: loops {@code acquire a permit of LIMIT → take a
 * free slot → hold it a moment → give the slot back → release}. The slots are LIMIT files of a
 * shared directory, each taken by creating it (atomic: exactly one creator succeeds) and given
 * back by deleting it: while at most LIMIT hold permits, a holder always finds a free slot; a
 * holder that finds none proves that more than LIMIT were inside at once, without comparing any
 * clocks.
 *
 * <p>Arguments: {@code URI NAME LIMIT ITERATIONS SLOTS GO LOG}: the worker creates
 * {@code LOG.ready} once its space is open, starts when the file GO exists, and writes LOG at the end. Each line of LOG is
 * {@code TOKEN SLOT ASKED ENTER EXIT} (SLOT -1: none was free; times on this host's monotonic
 * clock: ASKED before the acquisition, ENTER once granted, EXIT before the release).
 */
public final class SemaphoreWorker {
    private SemaphoreWorker() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: SemaphoreWorker URI NAME LIMIT ITERATIONS SLOTS GO LOG");
            System.exit(64);
        }
        String name = args[1];
        int limit = Integer.parseInt(args[2]);
        int iterations = Integer.parseInt(args[3]);
        Path slots = Path.of(args[4]);
        StringBuilder out = new StringBuilder();
        Path log = Path.of(args[6]);
        try (LockSpace locks = Interlock.open(args[0])) {
            // Start together: a JVM starts slower than it runs its turns, and workers that run one
            // after the other would prove nothing about how many hold at once.
            Files.createFile(Path.of(args[6] + ".ready"));
            Path go = Path.of(args[5]);
            while (!Files.exists(go)) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            for (int i = 0; i < iterations; i++) {
                long asked = System.nanoTime();
                try (Lease permit = locks.lock(name).limit(limit).acquire(Duration.ofMinutes(2))) {
                    long enter = System.nanoTime();
                    int slot = takeSlot(slots, limit);
                    // The workload: long enough that holders overlap, so an (N+1)th would find no slot.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                    if (slot >= 0) {
                        Files.delete(slots.resolve("slot-" + slot));
                    }
                    long exit = System.nanoTime();
                    out.append(permit.token())
                            .append(' ')
                            .append(slot)
                            .append(' ')
                            .append(asked)
                            .append(' ')
                            .append(enter)
                            .append(' ')
                            .append(exit)
                            .append('\n');
                }
            }
        }
        Files.writeString(log, out.toString(), StandardCharsets.US_ASCII);
    }

    /** Creates the first free slot file; -1 if all {@code limit} exist. */
    private static int takeSlot(Path slots, int limit) throws IOException {
        for (int s = 0; s < limit; s++) {
            try {
                Files.createFile(slots.resolve("slot-" + s));
                return s;
            } catch (FileAlreadyExistsException taken) {
                // held by another permit holder
            }
        }
        return -1;
    }
}
