package dev.interlock.spi.support;

import dev.interlock.LockSpace;
import dev.interlock.internal.DefaultLockSpace;
import dev.interlock.spi.LockBackend;

/**
 * What a backend's own tests may ask of a {@link LockSpace} the core opened over it: the backend
 * under it (to drive an {@link dev.interlock.spi.Attempt} by hand, or read the backend's state),
 * and how many leases it still tracks. Applications have no use for it.
 */
public final class Spaces {
    private Spaces() {}

    /**
     * The backend under {@code space}.
     *
     * @throws IllegalArgumentException if {@code space} was not opened by {@link dev.interlock.Interlock}
     */
    public static LockBackend backend(LockSpace space) {
        return core(space).backend();
    }

    /** How many leases of {@code space} are neither closed nor lost (a leak check for tests). */
    public static int openLeases(LockSpace space) {
        return core(space).openLeases();
    }

    private static DefaultLockSpace core(LockSpace space) {
        if (space instanceof DefaultLockSpace) {
            return (DefaultLockSpace) space;
        }
        throw new IllegalArgumentException(
                "this lock space was not opened by Interlock, so it has no backend to show: " + space);
    }
}
