package dev.interlock;

import java.util.List;
import java.util.Objects;

/**
 * What a backend knows about one name at one moment: its holders (empty when free) and how many
 * waiters it knows of (-1 when it cannot tell).
 *
 * @param name the lock name
 * @param holders current holders, exclusive first
 * @param waiters number of known waiters, or -1 if the backend cannot tell
 */
public record LockInfo(String name, List<HolderInfo> holders, int waiters) {
    public LockInfo {
        Objects.requireNonNull(name, "name");
        holders = List.copyOf(holders);
    }

    /** True if nobody holds the name. */
    public boolean isFree() {
        return holders.isEmpty();
    }
}
