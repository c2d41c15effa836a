package dev.interlock.file.dir;

import dev.interlock.file.internal.LibcEvents;
import dev.interlock.file.internal.NameFilter;
import java.nio.charset.StandardCharsets;

/**
 * What changes of a lock directory may wake a waiting {@link DirAttempt}: its entry names, by
 * kind (docs/dir-protocol.md). An attempt is woken only by the part of the directory that can let
 * it in, not by every rename in it (see {@code DirAttempt.waitFor}).
 */
final class DirWakeFilters {
    private DirWakeFilters() {}

    /** The gate changed hands (or was renewed, or reclaimed). */
    static final NameFilter GATE =
            (mask, b, off, len) -> NameFilter.startsWith(b, off, len, "F.") || NameFilter.startsWith(b, off, len, "X.");

    /** A reader left (or renewed, or was removed): for a writer that holds the gate while readers drain. */
    static final NameFilter READERS =
            (mask, b, off, len) -> NameFilter.startsWith(b, off, len, "R.") || NameFilter.startsWith(b, off, len, "B.");

    /** The queued waiter with {@code nonce}, which goes first, left the queue (its entry was removed). */
    static NameFilter waiterGone(String nonce) {
        byte[] part = ("." + nonce + ".").getBytes(StandardCharsets.US_ASCII);
        return (mask, b, off, len) -> (mask & LibcEvents.IN_DELETE) != 0
                && NameFilter.startsWith(b, off, len, "Q.")
                && NameFilter.contains(b, off, len, part);
    }
}
