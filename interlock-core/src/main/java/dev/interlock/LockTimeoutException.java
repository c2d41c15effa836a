package dev.interlock;

import java.time.Duration;
import java.util.List;

/**
 * An acquire with a timeout gave up (or a zero timeout found the lock busy). Nothing is held and
 * no lock state was changed. {@link #blockers()} says who stood in the way at the last try.
 */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;
    private final Duration waited;
    private final transient List<HolderInfo> blockers;

    public LockTimeoutException(String backend, String lockName, Duration waited, String message) {
        this(backend, lockName, waited, message, List.of());
    }

    public LockTimeoutException(
            String backend, String lockName, Duration waited, String message, List<HolderInfo> blockers) {
        super(backend, lockName, message, null);
        this.waited = waited;
        this.blockers = List.copyOf(blockers);
    }

    /** How long the caller waited, on the monotonic clock. */
    public Duration waited() {
        return waited;
    }

    /**
     * Who blocked the last try, as far as the backend could tell: holders, and queued waiters that
     * go first ({@link HolderInfo#waiting()}). Empty if unknown.
     */
    public List<HolderInfo> blockers() {
        return blockers == null ? List.of() : blockers;
    }
}
