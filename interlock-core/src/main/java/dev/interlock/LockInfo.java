package dev.interlock;

import java.util.List;
import java.util.Objects;

/**
 * What a backend knows about one name at one moment: its holders (empty when free), how many
 * waiters it knows of (-1 when it cannot tell) and, where the backend keeps a queue, who they are.
 *
 * @param name the lock name
 * @param holders current holders, exclusive first
 * @param waiters number of known waiters, or -1 if the backend cannot tell
 * @param queued the queued waiters in the order they will be served (each {@link HolderInfo#waiting()}),
 *     empty if none or if the backend keeps no queue; a free lock with queued waiters is taken by
 *     the first of them, so they are who a newcomer waits for
 */
public record LockInfo(String name, List<HolderInfo> holders, int waiters, List<HolderInfo> queued) {
    public LockInfo {
        Objects.requireNonNull(name, "name");
        holders = List.copyOf(holders);
        queued = List.copyOf(queued);
    }

    /** A lock whose backend names no queued waiters. */
    public LockInfo(String name, List<HolderInfo> holders, int waiters) {
        this(name, holders, waiters, List.of());
    }

    /** True if nobody holds the name. */
    public boolean isFree() {
        return holders.isEmpty();
    }
}
