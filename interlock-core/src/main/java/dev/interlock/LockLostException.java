package dev.interlock;

/**
 * A lease is no longer held: it ran out while renewal failed, it was broken, the lock file was
 * removed or replaced, or the server lost it. Work protected by the lease must stop; anything it
 * still writes should carry the lease's fencing token so the receiver can reject it.
 */
public class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockLostException(String backend, String lockName, String message, Throwable cause) {
        super(backend, lockName, message, cause);
    }
}
