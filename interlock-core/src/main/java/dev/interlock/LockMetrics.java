package dev.interlock;

/**
 * What a lock space tells a metrics system, set with {@link Interlock.Builder#metrics}: an
 * interface with no dependency, so the core needs no metrics library
 * ({@code interlock-micrometer} implements it for Micrometer). The default, {@link #NONE}, makes
 * the space skip even the clock readings metrics would need.
 *
 * <p>Every method is called on the thread where the event happened (an acquiring thread, a
 * releasing thread, a background renewal) and must return quickly without blocking and without
 * calling back into the space. An exception thrown by a method is logged and ignored. Times are
 * nanoseconds on the space's monotonic {@link Ticker}. {@code backend} is the space's URI scheme
 * ({@code flock}, {@code dir}, {@code jdbc}, {@code redis}, {@code mem}); {@code name} is the lock
 * name as given, unbounded: an implementation that tags by name must bound its cardinality.
 */
public interface LockMetrics {
    /** Records nothing; the space then does no work for metrics at all. */
    LockMetrics NONE = new LockMetrics() {};

    /**
     * An acquisition succeeded.
     *
     * @param waitNanos time from the request to the try that succeeded (0 for the first try)
     * @param contended true if an earlier try of this acquisition found the lock busy
     */
    default void acquired(String backend, String name, Mode mode, long waitNanos, boolean contended) {}

    /**
     * An acquisition gave up with nothing held: a try without waiting found the lock busy
     * ({@code tryOnly}), or a wait ran out. Not called for an interrupted wait.
     */
    default void timedOut(String backend, String name, Mode mode, long waitNanos, boolean tryOnly) {}

    /** A held lock was released by its holder (closed), after {@code holdNanos} held. */
    default void released(String backend, String name, Mode mode, long holdNanos) {}

    /**
     * A renewal of a held lease failed without proving the lock gone (the backend unreachable, a
     * timeout): the lease stays valid until its deadline and renewal is retried.
     */
    default void renewFailed(String backend, String name, Mode mode, RuntimeException cause) {}

    /** A held lease was lost (ran out while renewal failed, broken, lock file replaced), after {@code holdNanos} held. */
    default void lost(String backend, String name, Mode mode, long holdNanos) {}
}
