package dev.interlock;

import java.util.List;
import java.util.Objects;

/**
 * What a backend knows about one name at one moment: its holders (empty when free), how many
 * waiters it knows of (-1 when it cannot tell) and, where the backend keeps a queue, who they are.
 * Immutable; backends build one with {@link #of} or {@link #builder(String)}.
 */
public final class LockInfo {
    private final String name;
    private final List<HolderInfo> holders;
    private final int waiters;
    private final List<HolderInfo> queued;
    private final int limit;

    private LockInfo(String name, List<HolderInfo> holders, int waiters, List<HolderInfo> queued, int limit) {
        this.name = Objects.requireNonNull(name, "name");
        this.holders = List.copyOf(holders);
        this.waiters = waiters;
        this.queued = List.copyOf(queued);
        this.limit = limit;
    }

    /**
     * @deprecated use {@link #builder(String)}, which keeps working when fields are added
     */
    @Deprecated
    public LockInfo(String name, List<HolderInfo> holders, int waiters, List<HolderInfo> queued) {
        this(name, holders, waiters, queued, 0);
    }

    /**
     * A lock whose backend names no queued waiters.
     *
     * @deprecated use {@link #of(String, List, int)}
     */
    @Deprecated
    public LockInfo(String name, List<HolderInfo> holders, int waiters) {
        this(name, holders, waiters, List.of(), 0);
    }

    /** A lock with {@code holders} (none: free) and {@code waiters} known waiters (-1: cannot tell), no queue. */
    public static LockInfo of(String name, List<HolderInfo> holders, int waiters) {
        return new LockInfo(name, holders, waiters, List.of(), 0);
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The lock name. */
    public String name() {
        return name;
    }

    /** Current holders, exclusive first; empty when free. */
    public List<HolderInfo> holders() {
        return holders;
    }

    /** Number of known waiters, or -1 if the backend cannot tell. */
    public int waiters() {
        return waiters;
    }

    /**
     * The queued waiters in the order they will be served (each {@link HolderInfo#waiting()}), empty
     * if none or if the backend keeps no queue. A free lock with queued waiters is taken by the
     * first of them, so they are who a newcomer waits for.
     */
    public List<HolderInfo> queued() {
        return queued;
    }

    /**
     * The semaphore limit of the current holders (each holds one of that many permits), or 0 if
     * the name is free or held as a plain lock.
     */
    public int limit() {
        return limit;
    }

    /** True if nobody holds the name. */
    public boolean isFree() {
        return holders.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof LockInfo)) {
            return false;
        }
        LockInfo l = (LockInfo) o;
        return waiters == l.waiters
                && limit == l.limit
                && name.equals(l.name)
                && holders.equals(l.holders)
                && queued.equals(l.queued);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, holders, waiters, queued, limit);
    }

    @Override
    public String toString() {
        return "LockInfo[" + name + ", holders=" + holders + ", waiters=" + waiters + ", queued=" + queued
                + (limit > 0 ? ", limit=" + limit : "") + "]";
    }

    /** Builds a {@link LockInfo}: free, waiters unknown, no queue, no limit until set. */
    public static final class Builder {
        private final String name;
        private List<HolderInfo> holders = List.of();
        private int waiters = -1;
        private List<HolderInfo> queued = List.of();
        private int limit;

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        public Builder holders(List<HolderInfo> holders) {
            this.holders = holders;
            return this;
        }

        public Builder waiters(int waiters) {
            this.waiters = waiters;
            return this;
        }

        public Builder queued(List<HolderInfo> queued) {
            this.queued = queued;
            return this;
        }

        /** The holders' semaphore limit; 0 (the default) for a free name or a plain lock. */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        public LockInfo build() {
            return new LockInfo(name, holders, waiters, queued, limit);
        }
    }
}
