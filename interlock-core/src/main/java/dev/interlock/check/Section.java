package dev.interlock.check;

import java.util.Objects;

/**
 * One critical section as a worker recorded it: its mode, the fencing token of its lease, the
 * value of the shared counter it read on entry (exclusive sections then wrote that plus one), and
 * when it asked for the lock, entered and left on its host's monotonic clock (comparable only
 * between sections of the same {@code clock}: the same host).
 *
 * @param source who recorded it (worker and host), for evidence
 * @param exclusive true for an exclusive section
 * @param token the lease's fencing token
 * @param read the counter value read on entry, or -1 if not recorded
 * @param clock identifies a monotonic clock (e.g. the host's boot id); sections with different
 *     clocks are never compared by time
 * @param asked when the acquisition was asked for, in nanoseconds on {@code clock} (the same as
 *     {@code enter} when not recorded): the wait is {@code enter - asked}
 * @param enter entry time (the lock granted) in nanoseconds on {@code clock}
 * @param exit exit time (the release about to begin) in nanoseconds on {@code clock}
 */
public record Section(
        String source, boolean exclusive, long token, long read, String clock, long asked, long enter, long exit) {
    public Section {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(clock, "clock");
    }

    /** A section whose request time was not recorded (its wait counts as zero). */
    public Section(String source, boolean exclusive, long token, long read, String clock, long enter, long exit) {
        this(source, exclusive, token, read, clock, enter, enter, exit);
    }

    /** How long the acquisition waited, in nanoseconds (0 when the request time was not recorded). */
    public long waitNanos() {
        return enter - asked;
    }

    /** The same section ending at {@code exit} (a section whose holder was killed ends at the kill). */
    public Section endingAt(long exit) {
        return new Section(source, exclusive, token, read, clock, asked, enter, exit);
    }

    /** The same section recorded by {@code source}. */
    public Section from(String source) {
        return new Section(source, exclusive, token, read, clock, asked, enter, exit);
    }

    /**
     * One line of a worker's log: {@code MODE TOKEN READ CLOCK ASKED ENTER EXIT}, or
     * {@code MODE TOKEN READ CLOCK ENTER EXIT} when {@code asked == enter} (the form readers before
     * the request time existed expect).
     */
    public String format() {
        return (exclusive ? "EX" : "SH")
                + ' '
                + token
                + ' '
                + read
                + ' '
                + clock
                + ' '
                + (asked != enter ? asked + " " : "")
                + enter
                + ' '
                + exit;
    }

    /**
     * Parses {@link #format()}'s lines (also the older form {@code MODE TOKEN ENTER EXIT}, which
     * has no counter value and one clock).
     *
     * @throws IllegalArgumentException naming the line if it is not one
     */
    public static Section parse(String source, String line) {
        String[] f = line.trim().split(" ");
        try {
            if (f.length == 7 && (f[0].equals("EX") || f[0].equals("SH"))) {
                return new Section(
                        source,
                        f[0].equals("EX"),
                        Long.parseLong(f[1]),
                        Long.parseLong(f[2]),
                        f[3],
                        Long.parseLong(f[4]),
                        Long.parseLong(f[5]),
                        Long.parseLong(f[6]));
            }
            if (f.length == 6 && (f[0].equals("EX") || f[0].equals("SH"))) {
                return new Section(
                        source,
                        f[0].equals("EX"),
                        Long.parseLong(f[1]),
                        Long.parseLong(f[2]),
                        f[3],
                        Long.parseLong(f[4]),
                        Long.parseLong(f[5]));
            }
            if (f.length == 4 && (f[0].equals("EX") || f[0].equals("SH"))) {
                return new Section(
                        source,
                        f[0].equals("EX"),
                        Long.parseLong(f[1]),
                        -1,
                        "",
                        Long.parseLong(f[2]),
                        Long.parseLong(f[3]));
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new IllegalArgumentException("not a section record in " + source + ": '" + line + "'");
    }

    @Override
    public String toString() {
        return (exclusive ? "EX" : "SH") + " token " + token + (read >= 0 ? " read " + read : "")
                + (enter != exit || enter != 0 ? " [" + enter + ", " + exit + "]" : "") + " from " + source;
    }
}
