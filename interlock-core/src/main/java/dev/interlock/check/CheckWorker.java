package dev.interlock.check;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A worker process of the exclusion check: loops {@code acquire → read the counter (exclusive:
 * write it back plus one) → release}, recording each section ({@link Section#format()}) with the
 * host's boot id as its clock, and writes the records to its log at the end.
 *
 * <p>The counter is a plain file read and rewritten in place, exactly the lost-update recipe of
 * the lost-update recipe: without a working lock, increments get lost and values repeat, which
 * {@link ExclusionCheck} detects without comparing clocks across hosts.
 *
 * <p>Arguments: {@code URI NAME MODES ITERATIONS LOG COUNTER}, MODES being {@code ex}, {@code sh}
 * or {@code mixed} (about one exclusive in three). Prints {@code READY} once started.
 */
public final class CheckWorker {
    private CheckWorker() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: CheckWorker URI NAME ex|sh|mixed ITERATIONS LOG COUNTER");
            System.exit(64);
        }
        String uri = args[0];
        String name = args[1];
        String modes = args[2];
        int iterations = Integer.parseInt(args[3]);
        Path log = Path.of(args[4]);
        Path counter = Path.of(args[5]);
        String clock = clockId();
        String source = log.getFileName() + "@" + ProcessIdentity.current().host();
        StringBuilder out = new StringBuilder();
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        System.out.println("READY");
        System.out.flush();
        try (LockSpace locks = Interlock.open(uri)) {
            for (int i = 0; i < iterations; i++) {
                Mode mode = modes.equals("ex")
                        ? Mode.EXCLUSIVE
                        : modes.equals("sh") ? Mode.SHARED : rnd.nextInt(3) == 0 ? Mode.EXCLUSIVE : Mode.SHARED;
                try (Lease lease = locks.acquire(name, mode, Duration.ofMinutes(2))) {
                    long enter = System.nanoTime();
                    long read = read(counter);
                    if (mode == Mode.EXCLUSIVE) {
                        Thread.onSpinWait();
                        Files.writeString(counter, Long.toString(read + 1));
                    }
                    long exit = System.nanoTime();
                    out.append(new Section(source, mode == Mode.EXCLUSIVE, lease.token(), read, clock, enter, exit)
                                    .format())
                            .append('\n');
                }
            }
        }
        Files.writeString(log, out.toString(), StandardCharsets.US_ASCII);
    }

    /** The counter's value; an empty or missing file is 0. */
    public static long read(Path counter) throws IOException {
        String s = Files.exists(counter) ? Files.readString(counter).trim() : "";
        return s.isEmpty() ? 0 : Long.parseLong(s);
    }

    /**
     * Names this host's monotonic clock. {@code System.nanoTime} is CLOCK_MONOTONIC on Linux,
     * shared by every process of one boot of one kernel (containers included), so the boot id names
     * it; a time namespace (Linux 5.6, {@code unshare --time}) shifts it, so a process in a time
     * namespace other than the first one adds that namespace's inode number. Sections with
     * different names are never compared by time. {@code "-"} if the boot id cannot be read.
     */
    public static String clockId() {
        String boot = ProcessIdentity.current().bootId().replace("-", "");
        if (boot.isEmpty()) {
            return "-";
        }
        String ns = timeNamespace();
        return ns.isEmpty() || ns.equals(INITIAL_TIME_NAMESPACE) ? boot : boot + "-t" + ns;
    }

    /** PROC_TIME_INIT_INO of include/linux/proc_ns.h: the inode of the first time namespace. */
    private static final String INITIAL_TIME_NAMESPACE = "4026531834";

    /** The inode number of this process's time namespace, or "" if unknown (no /proc, kernel before 5.6). */
    private static String timeNamespace() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/time")).toString(); // time:[4026531834]
            int open = link.indexOf('[');
            int close = link.indexOf(']');
            return open >= 0 && close > open ? link.substring(open + 1, close) : "";
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return "";
        }
    }
}
