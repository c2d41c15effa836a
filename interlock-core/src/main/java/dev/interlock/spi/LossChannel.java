package dev.interlock.spi;

/**
 * How a backend tells the core, at once, that a lock it granted is gone, when it learns it by
 * itself rather than from a renewal: a Redis keyspace event, a ZooKeeper session that expired, a
 * database connection that held the lock and closed. The core then declares the lease lost,
 * tells its listeners and releases it (owner-checked, so nothing that is someone else's).
 *
 * <p>Thread-safe and cheap; it never blocks and never calls the backend. A report made before
 * the grant was handed to the core is kept and applied when the lease starts; reports after the
 * lease was closed or lost are ignored.
 */
@FunctionalInterface
public interface LossChannel {
    /**
     * @param reason what happened, for the holder's message ("the key expired on the server")
     * @param cause the error behind it, or null
     */
    void lost(String reason, Throwable cause);

    /**
     * For {@link LeaseKind#SESSION} grants: the backend now knows its session cannot have ended
     * before {@code expiryNanos}, and will declare the grant lost at {@code lossPointNanos} (before
     * it) unless the session answers again; both on {@link BackendConfig#ticker()}. Report it when
     * the grant is made and whenever the session answers (as often as it likes: the core passes on
     * only moves that matter). The core passes it to what guards work done under the lease:
     * {@code interlock run}'s sentinel stops the command at the loss point even if the process
     * that holds the lease is stopped (SIGSTOP) and cannot say so itself. The default ignores it.
     */
    default void sessionDeadline(long lossPointNanos, long expiryNanos) {}
}
