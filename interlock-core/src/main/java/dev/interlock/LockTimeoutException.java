package dev.interlock;

import java.time.Duration;

/** An acquire with a timeout gave up. Nothing is held and no lock state was changed. */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;
    private final Duration waited;

    public LockTimeoutException(String backend, String lockName, Duration waited, String message) {
        super(backend, lockName, message, null);
        this.waited = waited;
    }

    /** How long the caller waited, on the monotonic clock. */
    public Duration waited() {
        return waited;
    }
}
