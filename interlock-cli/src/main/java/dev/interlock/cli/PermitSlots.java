package dev.interlock.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The proof of {@code interlock verify --limit N} that needs no clock: N slots in the run's
 * directory, {@code slot-0} to {@code slot-(N-1)}. A permit holder claims the first free one by
 * creating it, an atomic exclusive create (a symbolic link whose target names the holder, so
 * the link and who made it appear in one step), and deletes it before it releases its permit.
 * While at most N hold permits, a holder always finds a free slot; one that finds all N taken
 * proves that more than N were inside at once, and the N links say who they were (the rule of
 * the testkit's {@code SemaphoreChecker}, here across hosts when the directory is shared).
 *
 * <p>A holder killed inside its section cannot give its slot back: {@code verify} deletes it once
 * the holder is dead ({@link #giveBack}). A backend that frees a dead holder's permit at once may
 * grant it before that delete, so a holder that finds all slots taken with one of them a killed
 * holder's is not proof of an overbooking ({@link PermitCheck} leaves it out).
 */
final class PermitSlots {
    private final Path dir;
    private final int limit;

    PermitSlots(Path dir, int limit) {
        this.dir = dir;
        this.limit = limit;
    }

    /** What one holder found: the slot it took, or -1 and who held every slot. */
    record Claim(int slot, List<String> occupants) {}

    /** {@code SOURCE TOKEN}: who holds a slot, as its link says. */
    static String holder(String source, long token) {
        return source + " " + token;
    }

    /** Takes the first free slot for {@code holder}; when none is free, reads who holds each one. */
    Claim take(String holder) throws IOException {
        for (int s = 0; s < limit; s++) {
            Path slot = slot(s);
            try {
                Files.createSymbolicLink(slot, Path.of(holder));
                return new Claim(s, List.of());
            } catch (FileAlreadyExistsException taken) {
                // An NFS reply lost after the create succeeded looks like this too: the link then names us.
                if (holder.equals(occupant(slot))) {
                    return new Claim(s, List.of());
                }
            }
        }
        List<String> occupants = new ArrayList<>();
        for (int s = 0; s < limit; s++) {
            occupants.add(occupant(slot(s)));
        }
        return new Claim(-1, occupants);
    }

    /** Gives {@code slot} back (no longer there: already given back, nothing to do). */
    void giveBack(int slot) throws IOException {
        if (slot >= 0) {
            Files.deleteIfExists(slot(slot));
        }
    }

    private Path slot(int s) {
        return dir.resolve("slot-" + s);
    }

    /** Who holds {@code slot}, or {@code (free)} if it was given back meanwhile. */
    private static String occupant(Path slot) throws IOException {
        try {
            return Files.readSymbolicLink(slot).toString();
        } catch (NoSuchFileException e) {
            return "(free)";
        }
    }
}
