package dev.interlock.check;

import java.util.Objects;

/**
 * One critical section as a worker recorded it: its mode, the fencing token of its lease, the
 * value of the shared counter it read on entry (exclusive sections then wrote that plus one), and
 * when it entered and left on its host's monotonic clock (comparable only between sections of the
 * same {@code clock}: the same host).
 *
 * @param source who recorded it (worker and host), for evidence
 * @param exclusive true for an exclusive section
 * @param token the lease's fencing token
 * @param read the counter value read on entry, or -1 if not recorded
 * @param clock identifies a monotonic clock (e.g. the host's boot id); sections with different
 *     clocks are never compared by time
 * @param enter entry time in nanoseconds on {@code clock}
 * @param exit exit time in nanoseconds on {@code clock}
 */
public record Section(String source, boolean exclusive, long token, long read, String clock, long enter, long exit) {
    public Section {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(clock, "clock");
    }

    /** One line of a worker's log: {@code MODE TOKEN READ CLOCK ENTER EXIT}. */
    public String format() {
        return (exclusive ? "EX" : "SH") + ' ' + token + ' ' + read + ' ' + clock + ' ' + enter + ' ' + exit;
    }

    /**
     * Parses {@link #format()}'s line (also the older form {@code MODE TOKEN ENTER EXIT}, which has
     * no counter value and one clock).
     *
     * @throws IllegalArgumentException naming the line if it is not one
     */
    public static Section parse(String source, String line) {
        String[] f = line.trim().split(" ");
        try {
            if (f.length == 6 && (f[0].equals("EX") || f[0].equals("SH"))) {
                return new Section(source, f[0].equals("EX"), Long.parseLong(f[1]), Long.parseLong(f[2]), f[3],
                        Long.parseLong(f[4]), Long.parseLong(f[5]));
            }
            if (f.length == 4 && (f[0].equals("EX") || f[0].equals("SH"))) {
                return new Section(source, f[0].equals("EX"), Long.parseLong(f[1]), -1, "", Long.parseLong(f[2]), Long.parseLong(f[3]));
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
