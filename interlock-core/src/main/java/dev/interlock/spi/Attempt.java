package dev.interlock.spi;

import dev.interlock.HolderInfo;
import java.util.List;
import java.util.Optional;

/**
 * One acquisition in progress, driven by the core's wait loop:
 * <ol>
 *   <li>{@link #tryAcquire()} makes one non-blocking try;</li>
 *   <li>if it fails, {@link #await(long)} blocks until the lock state may have changed since that
 *       try began, or until the time is up; spurious returns are allowed, missed changes are not
 *       (a release that happens between the try and the await must end the await promptly);</li>
 *   <li>{@link #close()} ends the attempt, giving up any place it holds in a queue. It is called
 *       whether or not a grant was returned, and must not release a returned grant.</li>
 * </ol>
 * Used by one thread at a time.
 */
public interface Attempt extends AutoCloseable {
    /** One non-blocking try. @throws dev.interlock.LockBackendException on backend failure */
    Optional<Grant> tryAcquire();

    /**
     * Waits for a possible change, at most {@code nanos}. Must return promptly when interrupted.
     *
     * @throws InterruptedException if the thread is interrupted
     */
    void await(long nanos) throws InterruptedException;

    /** Who blocked the last try, for messages (may be empty if unknown). */
    List<HolderInfo> blockers();

    @Override
    void close();
}
