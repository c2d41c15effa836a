package dev.interlock;

import java.util.Locale;

/**
 * How a lock is held.
 *
 * <p>Any number of {@link #SHARED} holders may hold a name at once; an {@link #EXCLUSIVE}
 * holder excludes every other holder. Every backend serves a waiting exclusive request before
 * shared requests that arrive after it, so a steady stream of readers cannot starve a writer.
 */
public enum Mode {
    /** Many holders at once (readers). */
    SHARED,
    /** One holder, excluding every other (writer). The default. */
    EXCLUSIVE;

    /** The two-letter form used in lock records and by {@code interlock status}: {@code SH} or {@code EX}. */
    public String shortName() {
        return this == SHARED ? "SH" : "EX";
    }

    /**
     * Parses {@code SH}, {@code EX}, {@code shared} or {@code exclusive} (any case).
     *
     * @throws IllegalArgumentException if the text is none of those
     */
    public static Mode parse(String text) {
        switch (text.trim().toUpperCase(Locale.ROOT)) {
            case "SH":
            case "SHARED":
                return SHARED;
            case "EX":
            case "EXCLUSIVE":
                return EXCLUSIVE;
            default:
                throw new IllegalArgumentException(
                        "unknown lock mode '" + text + "': use SH (shared) or EX (exclusive)");
        }
    }
}
