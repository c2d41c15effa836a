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
}
