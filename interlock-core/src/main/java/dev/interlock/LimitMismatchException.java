package dev.interlock;

/**
 * A request disagrees with how its name is held right now: it asks for a permit of a semaphore
 * of N while the name is held as a plain lock or as a semaphore of another limit, or for a plain
 * lock while the name is held as a semaphore. Nothing was granted. It is a caller's mistake (two
 * programs that disagree about what the name is), so waiting does not mend it: the acquisition
 * stops at once, whatever its timeout.
 */
public class LimitMismatchException extends LockException {
    private static final long serialVersionUID = 1L;
    private final int limitInForce;
    private final int limitAsked;

    public LimitMismatchException(String backend, String lockName, String message, int limitInForce, int limitAsked) {
        super(backend, lockName, message, null);
        this.limitInForce = limitInForce;
        this.limitAsked = limitAsked;
    }

    /** The limit of the name's current holders: 0 if they hold it as a plain lock. */
    public int limitInForce() {
        return limitInForce;
    }

    /** The limit the refused request stated: 0 for a plain lock. */
    public int limitAsked() {
        return limitAsked;
    }
}
