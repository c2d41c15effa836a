package dev.interlock.file.dir;

import dev.interlock.HolderInfo;
import dev.interlock.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The names of the entries inside one lock directory (format version {@value #FORMAT}). Every
 * record of the protocol is a file <em>name</em>: it appears complete and atomically with the
 * link or rename that publishes it, so nobody can read half a record. See docs/dir-protocol.md.
 *
 * <pre>
 * F.&lt;t&gt;.&lt;w&gt;.&lt;nonce&gt;                   gate, no writer; t = last token issued, w = token of the last writer
 * X.&lt;t&gt;.&lt;g&gt;.&lt;holder&gt;                  gate, held (or being drained) by the writer with token t; g = heartbeat count
 * R.&lt;t&gt;.&lt;holder&gt;                      a reader with token t
 * P.&lt;t&gt;.&lt;n&gt;.&lt;holder&gt;                  a permit of a semaphore of n with token t
 * B.&lt;t&gt;.&lt;g&gt;.&lt;holder&gt;                  heartbeat of reader or permit t; g = heartbeat count
 * Q.&lt;t&gt;.&lt;ms&gt;.&lt;m&gt;.&lt;g&gt;.&lt;holder&gt;        a waiter that arrived when the token was t, at ms (its wall clock), m = S|X|P (P: a permit)
 * holder = &lt;leaseMs&gt;.&lt;sinceSec&gt;.&lt;pid&gt;.&lt;startTicks&gt;.&lt;pidNs&gt;.&lt;bootId&gt;.&lt;nonce&gt;.&lt;host&gt;
 * </pre>
 */
final class DirEntries {
    static final int FORMAT = 1;
    static final Pattern HEX = Pattern.compile("[0-9a-f]{1,32}");
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private DirEntries() {}

    /** Who made an entry: enough to show it, to judge its lease and, on its own host, its liveness. */
    record Holder(
            long leaseMs,
            long sinceSec,
            long pid,
            long startTicks,
            long pidNs,
            String bootId,
            String nonce,
            String host) {
        String format() {
            return leaseMs + "." + sinceSec + "." + pid + "." + startTicks + "." + pidNs + "." + bootId + "." + nonce
                    + "." + host;
        }

        /** The {@link dev.interlock.Owner#id()} form. */
        String ownerId() {
            return host + ":" + pid + ":" + startTicks + ":" + nonce;
        }

        static Optional<Holder> parse(String s) {
            String[] f = s.split("\\.", 8);
            if (f.length != 8) {
                return Optional.empty();
            }
            try {
                long lease = Long.parseLong(f[0]);
                long since = Long.parseLong(f[1]);
                long pid = Long.parseLong(f[2]);
                long start = Long.parseLong(f[3]);
                long ns = Long.parseLong(f[4]);
                if (lease <= 0
                        || !HEX.matcher(f[5]).matches()
                        || !HEX.matcher(f[6]).matches()
                        || !HOST.matcher(f[7]).matches()) {
                    return Optional.empty();
                }
                return Optional.of(new Holder(lease, since, pid, start, ns, f[5], f[6], f[7]));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }

        HolderInfo info(Mode mode, long token) {
            return new HolderInfo(
                    mode,
                    Optional.of(ownerId()),
                    Optional.of(host),
                    pid,
                    Optional.of(Instant.ofEpochSecond(sinceSec)),
                    Optional.empty(),
                    OptionalLong.of(token),
                    Optional.of(Duration.ofMillis(leaseMs)),
                    Optional.of(bootId));
        }
    }

    /** A gate: {@code F} (free of writers) or {@code X} (a writer). */
    record Gate(String name, boolean writer, long token, long lastWriter, long beat, String nonce, Holder holder) {
        static Optional<Gate> parse(String n) {
            try {
                if (n.startsWith("F.")) {
                    String[] f = n.split("\\.", 4);
                    if (f.length == 4 && HEX.matcher(f[3]).matches()) {
                        long t = Long.parseLong(f[1]);
                        long w = Long.parseLong(f[2]);
                        if (t >= 0 && w >= 0 && w <= t && canonical(f[1], t) && canonical(f[2], w)) {
                            return Optional.of(new Gate(n, false, t, w, 0, f[3], null));
                        }
                    }
                } else if (n.startsWith("X.")) {
                    String[] f = n.split("\\.", 4);
                    if (f.length == 4) {
                        long t = Long.parseLong(f[1]);
                        long g = Long.parseLong(f[2]);
                        Optional<Holder> h = Holder.parse(f[3]);
                        if (t > 0 && g >= 0 && canonical(f[1], t) && canonical(f[2], g) && h.isPresent()) {
                            return Optional.of(
                                    new Gate(n, true, t, t, g, h.get().nonce(), h.get()));
                        }
                    }
                }
            } catch (NumberFormatException e) {
                // not a gate
            }
            return Optional.empty();
        }

        static String free(long token, long lastWriter, String nonce) {
            return "F." + token + "." + lastWriter + "." + nonce;
        }

        static String writer(long token, long beat, Holder h) {
            return "X." + token + "." + beat + "." + h.format();
        }
    }

    /** A reader entry {@code R.<t>.<holder>}. */
    record Reader(String name, long token, Holder holder) {
        static Optional<Reader> parse(String n) {
            if (!n.startsWith("R.")) {
                return Optional.empty();
            }
            String[] f = n.split("\\.", 3);
            try {
                long t = Long.parseLong(f[1]);
                Optional<Holder> h = f.length == 3 ? Holder.parse(f[2]) : Optional.empty();
                if (t > 0 && canonical(f[1], t) && h.isPresent()) {
                    return Optional.of(new Reader(n, t, h.get()));
                }
            } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
                // not a reader
            }
            return Optional.empty();
        }

        static String name(long token, Holder h) {
            return "R." + token + "." + h.format();
        }
    }

    /**
     * A permit {@code P.<t>.<n>.<holder>}: one of {@code n} permits of the name, token {@code t}.
     * Like a reader's entry its name never changes (its heartbeat is the {@link Beat} of its
     * token), so a listing that counts permits cannot miss one that is renewing.
     */
    record Permit(String name, long token, int limit, Holder holder) {
        static Optional<Permit> parse(String n) {
            if (!n.startsWith("P.")) {
                return Optional.empty();
            }
            String[] f = n.split("\\.", 4);
            try {
                if (f.length == 4) {
                    long t = Long.parseLong(f[1]);
                    int limit = Integer.parseInt(f[2]);
                    Optional<Holder> h = Holder.parse(f[3]);
                    if (t > 0 && limit > 0 && canonical(f[1], t) && canonical(f[2], limit) && h.isPresent()) {
                        return Optional.of(new Permit(n, t, limit, h.get()));
                    }
                }
            } catch (NumberFormatException e) {
                // not a permit
            }
            return Optional.empty();
        }

        static String name(long token, int limit, Holder h) {
            return "P." + token + "." + limit + "." + h.format();
        }
    }

    /** A reader's (or permit's) heartbeat {@code B.<t>.<g>.<holder>}; the holder lets a stray one (crash before its entry) be judged. */
    record Beat(String name, long token, long beat, Holder holder) {
        static Optional<Beat> parse(String n) {
            if (!n.startsWith("B.")) {
                return Optional.empty();
            }
            String[] f = n.split("\\.", 4);
            try {
                if (f.length == 4) {
                    long t = Long.parseLong(f[1]);
                    long g = Long.parseLong(f[2]);
                    Optional<Holder> h = Holder.parse(f[3]);
                    if (t > 0 && g >= 0 && canonical(f[1], t) && canonical(f[2], g) && h.isPresent()) {
                        return Optional.of(new Beat(n, t, g, h.get()));
                    }
                }
            } catch (NumberFormatException e) {
                // not a beat
            }
            return Optional.empty();
        }

        static String name(long token, long beat, Holder h) {
            return "B." + token + "." + beat + "." + h.format();
        }
    }

    /**
     * A waiter {@code Q.<t>.<ms>.<m>.<g>.<holder>}: ordered by (t, ms, nonce). A waiter for a
     * permit ({@code m = P}) is exclusive to everyone but other permit waiters.
     */
    record Waiter(String name, long seenToken, long arrivedMs, Mode mode, boolean permit, long beat, Holder holder)
            implements Comparable<Waiter> {
        static Optional<Waiter> parse(String n) {
            if (!n.startsWith("Q.")) {
                return Optional.empty();
            }
            String[] f = n.split("\\.", 6);
            try {
                if (f.length == 6 && (f[3].equals("S") || f[3].equals("X") || f[3].equals("P"))) {
                    long t = Long.parseLong(f[1]);
                    long ms = Long.parseLong(f[2]);
                    long g = Long.parseLong(f[4]);
                    Optional<Holder> h = Holder.parse(f[5]);
                    if (t >= 0 && g >= 0 && canonical(f[1], t) && canonical(f[4], g) && h.isPresent()) {
                        return Optional.of(new Waiter(
                                n,
                                t,
                                ms,
                                f[3].equals("S") ? Mode.SHARED : Mode.EXCLUSIVE,
                                f[3].equals("P"),
                                g,
                                h.get()));
                    }
                }
            } catch (NumberFormatException e) {
                // not a waiter
            }
            return Optional.empty();
        }

        /** This waiter for messages and {@code status}: since when it queued, how long its place lasts unrenewed. */
        HolderInfo info() {
            return new HolderInfo(
                    mode,
                    Optional.of(holder.ownerId()),
                    Optional.of(holder.host()),
                    holder.pid(),
                    Optional.of(Instant.ofEpochMilli(arrivedMs)),
                    Optional.empty(),
                    OptionalLong.empty(),
                    Optional.of(Duration.ofMillis(holder.leaseMs())),
                    Optional.of(holder.bootId()),
                    true);
        }

        static String name(long seenToken, long arrivedMs, Mode mode, boolean permit, long beat, Holder h) {
            String m = permit ? "P" : mode == Mode.SHARED ? "S" : "X";
            return "Q." + seenToken + "." + arrivedMs + "." + m + "." + beat + "." + h.format();
        }

        @Override
        public int compareTo(Waiter o) {
            int c = Long.compare(seenToken, o.seenToken);
            if (c == 0) {
                c = Long.compare(arrivedMs, o.arrivedMs);
            }
            return c != 0 ? c : holder.nonce().compareTo(o.holder.nonce());
        }
    }

    /** Numbers are written in one way only (no leading zeros or signs), so each state has one name. */
    private static boolean canonical(String text, long value) {
        return Long.toString(value).equals(text);
    }
}
