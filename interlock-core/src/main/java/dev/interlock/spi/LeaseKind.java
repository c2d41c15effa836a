package dev.interlock.spi;

/**
 * How a backend's granted locks stay held ({@link LockBackend#leaseKind()}), which decides what
 * the core does for them.
 * <ul>
 *   <li>{@link #NONE}: held until released or until the process ends (kernel locks); the core
 *       checks it periodically ({@code interlock.checkIntervalMs}, 10s) with
 *       {@link Grant#renew}.</li>
 *   <li>{@link #RENEWED}: expires unless renewed (lease tables, Redis keys, lock files with
 *       heartbeats); the core renews every third of the lease and declares it lost a fifth of the
 *       lease before its deadline if renewals keep failing or do not answer.</li>
 *   <li>{@link #SESSION}: held while a backend session lives (a ZooKeeper session); the backend
 *       keeps the session alive and reports its end through the {@link LossChannel}; the core
 *       checks it periodically like {@link #NONE}.</li>
 * </ul>
 */
public enum LeaseKind {
    NONE,
    RENEWED,
    SESSION
}
