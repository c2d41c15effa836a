package dev.interlock;

/**
 * Root of the lock failures that are not caller bugs. Messages are part of the API: they start
 * with the backend and the quoted lock name, say what happened, then give the facts.
 */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String backend;
    private final String lockName;

    public LockException(String backend, String lockName, String message, Throwable cause) {
        super(message, cause);
        this.backend = backend;
        this.lockName = lockName;
    }

    /** The lock space this happened in, such as {@code flock:/var/lock/app}; never contains a password. */
    public String backend() {
        return backend;
    }

    /** The lock name concerned, or {@code null} for a failure of the whole lock space. */
    public String lockName() {
        return lockName;
    }
}
