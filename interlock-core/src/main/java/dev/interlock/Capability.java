package dev.interlock;

/**
 * What a lock space can do beyond the common contract, as declared by its backend
 * ({@link LockSpace#capabilities()}). Every backend offers exclusive and shared modes, waiting,
 * crash recovery, fencing tokens and lost-lock notification; these vary.
 */
public enum Capability {
    /** {@link LockSpace#breakLock} works: a holder's lock can be removed by owner. */
    BREAK,
    /**
     * Fencing tokens are strictly greater than every earlier token of the name, always. Without
     * it, tokens still increase in normal operation but may fall back to a clock-based value that
     * repeats or goes back if the wall clock is stepped back (see the backend's documentation).
     */
    STRICT_FENCING,
    /** {@link LockInfo#waiters()} counts the waiters (not -1). */
    WAITER_COUNT,
    /** {@link LockInfo#queued()} names the queued waiters in the order they will be served. */
    QUEUE,
    /**
     * A grant can be handed to a child process with a descriptor, which then holds the lock even if
     * this JVM dies (kernel locks); used by {@code interlock run}.
     */
    INHERITABLE_DESCRIPTOR,
    /**
     * Counting semaphores: {@link LockRequest#limit(int)} works, so a name may have up to N
     * holders, each with its own lease and fencing token. The backend receives the limit in
     * {@link dev.interlock.spi.AcquireSpec#limit()}; without this capability the core refuses a
     * request with a limit before it reaches the backend.
     */
    SEMAPHORE
}
