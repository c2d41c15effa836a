package dev.interlock;

/**
 * The backend failed: an I/O error, a missing or unusable directory, an unreachable server.
 * The cause is chained. {@link #isTransient()} says whether retrying may help.
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;
    private final boolean transientFailure;

    public LockBackendException(
            String backend, String lockName, String message, Throwable cause, boolean transientFailure) {
        super(backend, lockName, message, cause);
        this.transientFailure = transientFailure;
    }

    public LockBackendException(String backend, String lockName, String message, Throwable cause) {
        this(backend, lockName, message, cause, false);
    }

    /** True if the same call may succeed later (a lost connection); false for a configuration problem. */
    public boolean isTransient() {
        return transientFailure;
    }
}
