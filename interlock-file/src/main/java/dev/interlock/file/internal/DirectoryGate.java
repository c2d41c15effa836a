package dev.interlock.file.internal;

import dev.interlock.Mode;
import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Internal API of Interlock (not for applications): the gate of {@link ReplaceTarget}, a
 * {@code flock(2)} on the file's directory, taken with a bounded wait.
 *
 * <p>Writers hold it for milliseconds (a directory scan, a create, a rename). But anyone who can
 * read the directory can open it and flock it too ({@code flock -s /etc sleep 1d}), so a blocking
 * flock would let any local user freeze every update in a directory she may only read. So the gate
 * is polled: after {@link #NOTICE_NANOS} the wait is reported once, naming the holders that
 * {@code /proc/locks} lists, and after the limit ({@code interlock.file.gateWaitMs}, 10 s) the
 * write fails, naming them again, with the file unchanged.
 */
final class DirectoryGate {
    /** After this long the wait is reported, once. */
    static final long NOTICE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private DirectoryGate() {}

    /** How long a writer waits for the gate before it gives up: {@code interlock.file.gateWaitMs}, 10 s by default. */
    static long limitNanos() {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(0, Long.getLong("interlock.file.gateWaitMs", 10_000)));
    }

    /**
     * Takes the flock {@code op} ({@code LOCK_SH} or {@code LOCK_EX}) on {@code dirfd}.
     *
     * @param notice told once, after {@link #NOTICE_NANOS}, who holds it
     * @param what the file being replaced, for the messages
     * @return null once held; if this file system cannot flock, why (the error's text)
     * @throws AtomicFileException {@link Reason#IO} if it is still held by someone else at the limit
     */
    static String take(int dirfd, int op, String directory, String what, Consumer<String> notice)
            throws AtomicFileException {
        long start = System.nanoTime();
        long limit = limitNanos();
        long pause = TimeUnit.MILLISECONDS.toNanos(1);
        boolean told = false;
        while (true) {
            try {
                if (NativeFiles.tryFlock(dirfd, op)) {
                    return null;
                }
            } catch (ErrnoException e) {
                return e.getMessage();
            }
            long waited = System.nanoTime() - start;
            if (waited >= limit) {
                throw new AtomicFileException(
                        Reason.IO,
                        "cannot replace " + what + ": its directory " + directory
                                + " has been locked with flock(2) for more than " + TimeUnit.NANOSECONDS.toMillis(limit)
                                + " ms by "
                                + holders(dirfd)
                                + ". Interlock's writers hold that lock for milliseconds only, and anyone who can read "
                                + directory + " can take it: stop that process; " + what + " is unchanged");
            }
            if (!told && waited >= NOTICE_NANOS) {
                told = true;
                notice.accept("waiting for the flock(2) on " + directory + " (held by " + holders(dirfd)
                        + ") to replace " + what + "; giving up after " + TimeUnit.NANOSECONDS.toMillis(limit) + " ms");
            }
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(pause, limit - waited));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AtomicFileException(
                        Reason.IO,
                        "interrupted while waiting for the flock(2) on " + directory + "; " + what + " is unchanged");
            }
            pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
        }
    }

    /** Who holds a flock on the directory, as /proc/locks lists them: "pid N (command, user U)". */
    static String holders(int dirfd) {
        LibcFiles.Statx st;
        try {
            st = NativeFiles.fstat(dirfd);
        } catch (ErrnoException e) {
            return "a holder that cannot be named (" + e.getMessage() + ")";
        }
        List<String> who = new ArrayList<>();
        for (ProcLocks.Entry e : ProcLocks.flocksOn((int) st.devMajor(), (int) st.devMinor(), st.ino())) {
            if (!e.waiting()) {
                who.add((e.mode() == Mode.SHARED ? "a shared lock of " : "") + process(e.pid()));
            }
        }
        if (who.isEmpty()) {
            return "a holder that /proc/locks does not list (another host, or another PID namespace)";
        }
        return String.join(", ", who);
    }

    /** "pid N (command, user U)", or "pid N" when /proc says no more; "this process" for our own pid. */
    private static String process(long pid) {
        if (pid == ProcessHandle.current().pid()) {
            return "this process (pid " + pid + ", another writer in it)";
        }
        Path proc = Path.of("/proc", Long.toString(pid));
        try {
            String comm = Files.readString(proc.resolve("comm"), StandardCharsets.UTF_8)
                    .trim();
            String uid = null;
            for (String line : Files.readAllLines(proc.resolve("status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("Uid:")) {
                    uid = line.substring(4).trim().split("\\s+")[0];
                }
            }
            return "pid " + pid + " (" + comm + (uid == null ? "" : ", user " + Ids.user(Integer.parseInt(uid))) + ")";
        } catch (IOException | RuntimeException e) {
            return "pid " + pid;
        }
    }
}
