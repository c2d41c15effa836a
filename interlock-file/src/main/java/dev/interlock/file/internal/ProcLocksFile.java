package dev.interlock.file.internal;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Internal API of Interlock (not for applications; may change in any release): the kernel's list
 * of file locks, {@code /proc/locks}, which {@code flock:}'s {@code status} reads.
 *
 * <p>Its cost is the kernel's, not the reading's: to list the locks, fs/locks.c takes its
 * {@code file_rwsem} for writing, and the first writer after a quiet period waits for an RCU grace
 * period (5–15 ms measured on the development VM, against 40 µs for a read within about ten
 * milliseconds of the one before). {@link #keepWarm} lets a short command overlap that wait with
 * its own start.
 */
public final class ProcLocksFile {
    private ProcLocksFile() {}

    /** How often {@link #keepWarm} reads: well inside the ~10 ms in which a read stays cheap. */
    private static final long WARM_INTERVAL_NANOS = 4_000_000;

    private static final AtomicInteger READS = new AtomicInteger();
    private static final AtomicInteger WARM_READS = new AtomicInteger();

    /**
     * The text of /proc/locks (ASCII), or "" if it cannot be read. Through java.io, as the other
     * small files of a short command's start: java.nio's channel, reader and decoder cost more
     * than the read.
     */
    public static String read() {
        READS.incrementAndGet();
        try (FileInputStream in = new FileInputStream("/proc/locks")) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return "";
        }
    }

    /** How many times {@link #read} has been called in this process; the start of {@link #keepWarm}. */
    public static int reads() {
        return READS.get();
    }

    /**
     * Reads /proc/locks now and again every few milliseconds, discarding what it reads, until
     * somebody has {@linkplain #read read} it since {@link #reads()} returned {@code readsBefore},
     * or {@code maxNanos} have passed: for a short command that will read it (on a thread of its
     * own, started first). The command's own read is then a fresh one that does not wait for the
     * kernel. Uses only java.io, so that it needs nothing loaded. Returns how many times it read.
     */
    public static int keepWarm(int readsBefore, long maxNanos) {
        long end = System.nanoTime() + maxNanos;
        int before = readsBefore;
        int reads = 0;
        byte[] buf = new byte[16384];
        while (READS.get() == before && System.nanoTime() - end < 0) {
            try (FileInputStream in = new FileInputStream("/proc/locks")) {
                while (in.read(buf) > 0) {
                    // discarded: only the kernel's state matters
                }
            } catch (IOException e) {
                return reads;
            }
            reads++;
            WARM_READS.incrementAndGet();
            LockSupport.parkNanos(WARM_INTERVAL_NANOS);
        }
        return reads;
    }

    /** How many reads {@link #keepWarm} has made in this process; for tests. */
    static int warmReads() {
        return WARM_READS.get();
    }
}
